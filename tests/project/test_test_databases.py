"""make mutate's pytest processes each build a test database of their own (tests/conftest.py)."""

from __future__ import annotations

import copy
from pathlib import Path

from django.conf import settings
from django.db import connection

from tests._helpers.isolation import own_test_database


def test_each_process_names_its_own_sqlite_test_database() -> None:
    default = copy.deepcopy(settings.DATABASES["default"])
    before = Path(default["TEST"]["NAME"])
    own_test_database(default, connection.vendor, 4242)
    if connection.vendor != "sqlite":
        assert Path(default["TEST"]["NAME"]) == before
        return
    after = Path(default["TEST"]["NAME"])
    assert after != before
    assert after.parent == before.parent
    assert after.name == f"{before.stem}-4242{before.suffix}"


def test_two_processes_never_share_one_file() -> None:
    names = set()
    for pid in (101, 102):
        default = copy.deepcopy(settings.DATABASES["default"])
        own_test_database(default, "sqlite", pid)
        names.add(default["TEST"]["NAME"])
    assert len(names) == 2


def test_a_process_that_runs_pytest_again_keeps_its_one_file() -> None:
    # scripts/mutants_against.py calls pytest.main once a mutant, in one process: a name that
    # grew by the pid at every session passed the file system's limit after a few dozen
    # ("unable to open database file", counted as kills).
    default = copy.deepcopy(settings.DATABASES["default"])
    own_test_database(default, "sqlite", 4242)
    once = default["TEST"]["NAME"]
    own_test_database(default, "sqlite", 4242)
    assert default["TEST"]["NAME"] == once
