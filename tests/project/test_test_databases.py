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


def test_one_process_running_pytest_again_and_again_keeps_one_name() -> None:
    # scripts/mutants_against.py runs pytest once a mutant in one process; a name that grew by
    # the pid each time passed the file system's limit and every run failed ("unable to open
    # database file"), counted as kills. A forked child renames for itself, once.
    default = copy.deepcopy(settings.DATABASES["default"])
    before = Path(default["TEST"]["NAME"])
    for _ in range(60):
        own_test_database(default, "sqlite", 4242)
    assert Path(default["TEST"]["NAME"]).name == f"{before.stem}-4242{before.suffix}"
    own_test_database(default, "sqlite", 4343)
    assert Path(default["TEST"]["NAME"]).name == f"{before.stem}-4343{before.suffix}"
