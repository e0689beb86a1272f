"""Settings read from the environment take effect (grove/settings.py), checked in a fresh
process so the test run's own settings do not mask them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from memory.apps import widths_hold_the_limits
from tests._helpers import ROOT


def _django(code: str, **env: str) -> str:
    script = f"import django; django.setup()\n{code}"
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "grove.settings", **env}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=environ, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


BUSY = """from django.db import connection
print(connection.cursor().execute("PRAGMA busy_timeout").fetchone()[0])"""


@pytest.mark.sqlite_only  # sqlite3's busy timeout; PostgreSQL's writers wait on the write lock
def test_grove_db_timeout_sets_the_busy_timeout(tmp_path):
    db = str(tmp_path / "t.sqlite3")
    assert _django(BUSY, GROVE_DB_TIMEOUT="7", GROVE_DB_PATH=db) == "7000"
    assert _django(BUSY, GROVE_DB_PATH=db) == "20000"  # the documented default, 20 s


def test_testserver_is_an_allowed_host_only_in_tests(client, db):
    code = "from django.conf import settings\nprint(' '.join(settings.ALLOWED_HOSTS))"
    assert "testserver" not in _django(code).split()
    assert client.get("/login/").status_code == 200  # the test client's host, testserver


def test_a_length_setting_wider_than_its_column_is_a_start_up_error(settings):
    assert widths_hold_the_limits() == []
    settings.GROVE_MAX_SOURCE_CHARS = 2001
    assert [e.id for e in widths_hold_the_limits()] == ["memory.E001"]
