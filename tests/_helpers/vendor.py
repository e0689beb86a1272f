"""Statements tests run by hand: raw SQL, and the few the two engines spell differently."""

from __future__ import annotations

from django.db import connection, transaction

# Longest first: memory_event_... must not be taken for a table named memory_event_x.
_TABLES = sorted(
    [
        "memory_node",
        "memory_edge",
        "memory_event",
        "memory_recalllog",
        "memory_chaincheckpoint",
        "memory_apitoken",
    ],
    key=len,
    reverse=True,
)


def on_postgres() -> bool:
    return connection.vendor == "postgresql"


def drop_trigger(name: str) -> None:
    """Drop a guard, as an attacker holding the database would (rolled back with the test on
    both engines: their DDL is transactional)."""
    sql = f"DROP TRIGGER {name}"
    if on_postgres():
        table = next(t for t in _TABLES if name.startswith(t + "_"))
        sql += f" ON {table}"
    with connection.cursor() as cursor:
        cursor.execute(sql)


def table_columns(table: str) -> list[str]:
    """A table's columns, in order; on PostgreSQL without generated ones (no INSERT names them)."""
    with connection.cursor() as cursor:
        if on_postgres():
            cursor.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                "AND is_generated = 'NEVER' ORDER BY ordinal_position",
                [table],
            )
        else:
            cursor.execute(f"SELECT name FROM pragma_table_info('{table}')")
        return [row[0] for row in cursor.fetchall()]


def raw(sql: str, params: tuple = (), *, savepoint: bool = True, checks_now: bool = False) -> None:
    """Run one statement by hand, past the ORM, as an attacker holding the database would.

    In a savepoint of its own, so a statement the database refuses leaves the test's transaction
    usable on both engines; savepoint=False for what takes only outside a transaction (SQLite's
    PRAGMA foreign_keys). checks_now: PostgreSQL's deferred foreign-key checks first, as a commit
    would make them (the test's own writes leave them pending, and TRUNCATE refuses to run with
    pending trigger events)."""
    if not savepoint:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
        return
    with transaction.atomic(), connection.cursor() as cursor:
        if checks_now:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(sql, params)
