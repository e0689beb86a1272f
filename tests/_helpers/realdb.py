"""A real, migrated SQLite file for tests that start other processes (races, file locks).

Transactional test databases cannot be flushed here (nodes, edges and events refuse DELETE), so
these tests get a fresh file of their own: migrated once per session, copied per test.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.core.management import call_command
from django.db import connection

from bench.synthetic import use_database

_TEMPLATE: list[Path] = []


def migrated_template(tmp_path_factory) -> Path:
    """Migrated once per session (a fresh migrate takes seconds), then copied per test. A runner
    that calls pytest twice in one process (mutmut) gets a new temp dir: migrate again there."""
    if not _TEMPLATE or not _TEMPLATE[0].exists():
        _TEMPLATE.clear()
        path = tmp_path_factory.mktemp("realdb") / "template.sqlite3"
        with use_database(path):
            call_command("migrate", verbosity=0)
        db = sqlite3.connect(path)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        _TEMPLATE.append(path)
    return _TEMPLATE[0]


_PG_TEMPLATE: list[str] = []


def pg_admin(sql: str) -> None:
    """CREATE/DROP DATABASE, from the maintenance database (never inside a transaction)."""
    connection.close()
    with connection._nodb_cursor() as cursor:
        cursor.execute(sql)


def pg_migrated_template() -> str:
    """PostgreSQL's migrated template database, created once per session."""
    if not _PG_TEMPLATE:
        template = f"{connection.settings_dict['NAME']}_realdb_template"
        pg_admin(f'DROP DATABASE IF EXISTS "{template}"')
        pg_admin(f'CREATE DATABASE "{template}"')
        with use_database(template):
            call_command("migrate", verbosity=0)
        _PG_TEMPLATE.append(template)
    return _PG_TEMPLATE[0]


def _pg_real_db(tmp_path):
    """PostgreSQL's twin: a database cloned from a migrated template (CREATE DATABASE ...
    TEMPLATE), dropped after the test; yields its name where SQLite yields a path."""
    base = connection.settings_dict["NAME"]
    pg_migrated_template()
    name = f"{base}_real_{abs(hash(str(tmp_path))) % 10**8}"
    pg_admin(f'DROP DATABASE IF EXISTS "{name}"')
    pg_admin(f'CREATE DATABASE "{name}" TEMPLATE "{_PG_TEMPLATE[0]}"')
    try:
        with use_database(name):
            yield name
    finally:
        pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def production_named_pg_database(real_db: str):
    """A migrated PostgreSQL database named as production's would be (no test_ prefix),
    cloned from real_db's template and dropped afterwards; the connection points at it."""
    name = f"grove_probe_{abs(hash(real_db)) % 10**8}"
    with use_database(real_db):
        pass  # back on the test database, so the clone's source has no session on it
    pg_admin(f'DROP DATABASE IF EXISTS "{name}"')
    pg_admin(f'CREATE DATABASE "{name}" TEMPLATE "{_PG_TEMPLATE[0]}"')
    try:
        with use_database(name):
            yield name
    finally:
        pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def fresh_database(tmp_path, tmp_path_factory, django_db_blocker):
    """Point Django at a fresh migrated SQLite file for the test; yields its path (on
    PostgreSQL, a fresh database; yields its name). The real_db fixture (tests/conftest.py)."""
    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            yield from _pg_real_db(tmp_path)
            return
        path = tmp_path / "grove.sqlite3"
        shutil.copyfile(migrated_template(tmp_path_factory), path)
        with use_database(path):
            yield path


def database_env(db: Path | str) -> dict[str, str]:
    """The environment that points a child process at `db` (a file, or a PostgreSQL name)."""
    url = os.environ.get("GROVE_DATABASE_URL")
    if not url:
        return {"GROVE_DB_PATH": str(db)}
    parts = urlsplit(url)
    return {"GROVE_DATABASE_URL": urlunsplit(parts._replace(path=f"/{db}"))}


def run_together(
    script: str, args: list[list[str]], *, db: Path | str, tmp_path: Path
) -> list[str]:
    """Start one python process per args list, release them together through a barrier file,
    and return each one's last stdout line. The script should wait for sys.argv[1] to exist."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "grove.settings",
        **database_env(db),
        "GROVE_DATA_DIR": str(settings.DATA_DIR),
        "GROVE_SCROLL_DIR": str(settings.GROVE_SCROLL_DIR),
    }
    barrier = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(barrier), *extra],
            env=env,
            cwd=settings.BASE_DIR,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for extra in args
    ]
    # Each child prints "ready" once Django is set up, so the barrier releases warm processes.
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    barrier.touch()
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outputs.append(out.strip().splitlines()[-1] if out.strip() else "")
    return outputs


CHILD_PRELUDE = """
import os, sys, time, django
django.setup()
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.002)
"""
