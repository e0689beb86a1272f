"""No index repeats the leading columns of another (migration 0018): each is a write per row,
and a full index whose columns open a wider full index serves no lookup the wider one does
not. Read from the migrated test database itself, on either engine."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection

from tests._helpers.plans import plans

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


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner")
@pytest.mark.parametrize("reader", ["backlinks", "walk"])
def test_a_hubs_first_in_edges_come_from_the_index_alone(make_note, reader):
    """With no index on to_node_id alone, `to_node = X ORDER BY id LIMIT n` reads and sorts every
    in-edge: the backlinks and the walk take the ids from the covering (to_node, kind) index
    first, and read only those rows."""
    from dashboard.graph import backlinks
    from memory.visibility import Visibility
    from memory.walk import routes_from

    hub = make_note("A hub.")
    for i in range(3):
        make_note(f"Child {i}.", origins=[{"id": hub.pk, "relation": "derived_from"}])
    run = {
        "backlinks": lambda: backlinks(hub.pk),
        "walk": lambda: routes_from(hub, Visibility(domains=None, scope="both", as_of=None)),
    }[reader]
    # The in-edges' read with its limit (the count beside it has none).
    for plan in plans(run, '"to_node_id" = ', "LIMIT"):
        assert "COVERING INDEX memory_edge_to_kind" in plan, plan
        assert "INTEGER PRIMARY KEY" in plan, plan
