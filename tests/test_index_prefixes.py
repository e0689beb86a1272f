"""No index repeats the leading columns of another (migration 0018): each is a write per row,
and a full index whose columns open a wider full index serves no lookup the wider one does
not. Read from the migrated test database itself, on either engine."""

from __future__ import annotations

from django.apps import apps
from django.db import connection

OUR_APPS = ("memory", "review", "agents", "dashboard")


def _partial(table: str) -> set[str]:
    """Names of `table`'s indexes with a WHERE clause: they cover only some rows."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = %s",
                [table],
            )
        else:
            cursor.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [table]
            )
        return {name for name, sql in cursor.fetchall() if sql and " WHERE " in sql.upper()}


def _full_indexes(table: str) -> dict[str, tuple[str, ...]]:
    """Every index and unique constraint of `table` over plain columns, partial ones left out."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    partial = _partial(table)
    return {
        name: tuple(found["columns"])
        for name, found in constraints.items()
        if (found["index"] or found["unique"] or found["primary_key"])
        and found["columns"]
        and all(found["columns"])  # an expression index names no column
        and name not in partial
    }


def prefix_duplicates(table: str) -> list[str]:
    indexes = _full_indexes(table)
    return [
        f"{table}: {name} {columns} opens {other} {wider}"
        for name, columns in indexes.items()
        for other, wider in indexes.items()
        if other != name and len(wider) > len(columns) and wider[: len(columns)] == columns
    ]


def _our_tables() -> list[str]:
    return sorted({m._meta.db_table for m in apps.get_models() if m._meta.app_label in OUR_APPS})


def test_no_index_opens_another(db):
    tables = _our_tables()
    node = _full_indexes("memory_node")
    # Partial indexes cover some rows only: (created_at) under the candidates' one is no repeat.
    assert "memory_node_created_at" in node and "memory_node_decay_candidates" not in node
    assert "memory_edge" in tables and "memory_vector" in tables
    assert [d for t in tables for d in prefix_duplicates(t)] == []


def test_a_foreign_key_index_under_a_composite_is_caught(db):
    """The check itself: put back the index 0018 dropped and it is named."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE INDEX test_edge_to ON memory_edge (to_node_id)")
    try:
        found = prefix_duplicates("memory_edge")
        assert any("test_edge_to" in line and "memory_edge_to_kind" in line for line in found)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX test_edge_to")
