"""make mutate's pytest processes each build a test database of their own (tests/conftest.py)."""

from __future__ import annotations

import copy
from pathlib import Path

from django.conf import settings
from django.db import connection

from tests._helpers.isolation import own_test_database


def test_each_process_names_its_own_sqlite_test_database() -> None:
    default = copy.deepcopy(settings.DATABASES["default"])
    own_test_database(default, connection.vendor, 4242)
    if connection.vendor != "sqlite":  # PostgreSQL's test database is a fresh one a run
        assert default == settings.DATABASES["default"]
        return
    before = Path(settings.DATABASES["default"]["TEST"]["NAME"])
    after = Path(default["TEST"]["NAME"])
    assert after != before
    assert after.parent == before.parent
    assert after.name == f"{before.stem}-4242{before.suffix}"


def test_two_processes_never_share_one_file() -> None:
    names = set()
    for pid in (101, 102):
        default = {"TEST": {"NAME": "/data/test_grove.sqlite3"}}
        own_test_database(default, "sqlite", pid)
        names.add(default["TEST"]["NAME"])
    assert len(names) == 2


def test_a_process_that_starts_pytest_again_keeps_its_one_name() -> None:
    default = {"TEST": {"NAME": "/data/test_grove.sqlite3"}}
    own_test_database(default, "sqlite", 7)
    once = default["TEST"]["NAME"]
    for _ in range(300):  # scripts/mutants_against.py: a pytest session for each mutant
        own_test_database(default, "sqlite", 7)
    assert default["TEST"]["NAME"] == once == "/data/test_grove-7.sqlite3"
