"""The schema gate: no start on a database whose migrations this code does not know or lacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from memory.custody.schema import SchemaMismatch, require_current_schema, schema_problems
from tests._helpers import ROOT
from tests._helpers.realdb import database_env
from tests._helpers.vendor import raw


def test_a_current_database_passes(db):
    assert schema_problems() == []


def test_a_future_migration_is_refused(db):
    raw(
        "INSERT INTO django_migrations (app, name, applied) VALUES"
        " ('memory', '9999_from_the_future', '2030-01-01')"
    )
    with pytest.raises(SchemaMismatch, match=r"does not know: memory\.9999_from_the_future"):
        require_current_schema()


def test_an_unapplied_migration_is_refused(db):
    raw("DELETE FROM django_migrations WHERE app = 'memory' AND name = '0005_custody'")
    assert schema_problems() == ["migrations not applied: memory.0005_custody"]


def test_a_renamed_column_is_refused(db):
    raw("ALTER TABLE memory_node RENAME COLUMN source TO origin_text")
    assert "column memory_node.source is missing" in schema_problems()


def _manage(db_path: Path | str, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        **database_env(db_path),
        "GROVE_DATA_DIR": str(settings.DATA_DIR),
        "DJANGO_SETTINGS_MODULE": "grove.settings",
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )


def test_commands_stop_at_the_gate_and_migrate_passes(real_db):
    raw(  # committed: real_db is a database of its own, outside the test's transaction
        "INSERT INTO django_migrations (app, name, applied) VALUES"
        " ('memory', '9999_from_the_future', '2030-01-01')"
    )
    connection.close()
    refused = _manage(real_db, "integrity")
    assert refused.returncode != 0
    assert "Grove will not start" in refused.stderr
    assert "memory.9999_from_the_future" in refused.stderr
    assert _manage(real_db, "showmigrations", "memory").returncode == 0


def test_each_unknown_migration_is_named(db):
    for name in ("9998_from_the_future", "9999_further_still"):
        raw(
            "INSERT INTO django_migrations (app, name, applied) VALUES (%s, %s, '2030-01-01')",
            ("memory", name),
        )
    assert schema_problems() == [
        "applied migrations this code does not know: "
        "memory.9998_from_the_future, memory.9999_further_still"
    ]


@pytest.mark.parametrize(("unapplied", "more"), [(5, ""), (6, " and 1 more"), (7, " and 2 more")])
def test_unapplied_migrations_name_the_first_five_and_count_the_rest(db, unapplied, more):
    names = [f"memory.{n}" for n in _memory_migrations()[:unapplied]]
    for name in names:
        raw(
            "DELETE FROM django_migrations WHERE app = 'memory' AND name = %s",
            (name.split(".", 1)[1],),
        )
    assert schema_problems() == [f"migrations not applied: {', '.join(names[:5])}{more}"]


def _memory_migrations() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM django_migrations WHERE app = 'memory' ORDER BY name")
        return [name for (name,) in cursor.fetchall()]


def test_a_missing_table_and_a_later_missing_column_are_both_named(db):
    raw("ALTER TABLE memory_ticket RENAME TO memory_ticket_gone")
    raw("ALTER TABLE memory_watchscan RENAME COLUMN id TO scan_id")
    problems = schema_problems()
    assert problems[0] == "table memory_ticket is missing"
    assert "column memory_watchscan.id is missing" in problems
