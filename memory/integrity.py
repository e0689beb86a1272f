"""Integrity checks: each returns the violations it finds; an empty list means the check holds.

They read raw SQL on purpose: they must see what is in the file, whatever the ORM believes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import DatabaseError, connection

MAX_EXAMPLES = 20


@dataclass
class CheckResult:
    name: str
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def _rows(sql: str, params: tuple = ()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def permanent_but_decayed() -> list[str]:
    return [
        f"node {node_id} is permanent but decayed"
        for (node_id,) in _rows(
            "SELECT id FROM memory_node WHERE permanent = 1 AND decayed_at IS NOT NULL"
        )
    ]


def decayed_without_event() -> list[str]:
    return [
        f"node {node_id} is decayed but has no decayed event"
        for (node_id,) in _rows(
            """SELECT n.id FROM memory_node n WHERE n.decayed_at IS NOT NULL AND NOT EXISTS
               (SELECT 1 FROM memory_event e WHERE e.node_id = n.id AND e.kind = 'decayed')"""
        )
    ]


def lifecycle_flag_disagrees_with_latest_event() -> list[str]:
    """The decayed flag must match the latest lifecycle event (decayed vs restored/revived)."""
    rows = _rows(
        """
        WITH latest AS (
            SELECT node_id, kind, MAX(id) AS id FROM memory_event
            WHERE kind IN ('decayed', 'restored', 'revived') GROUP BY node_id
        )
        SELECT n.id, e.kind, n.decayed_at IS NOT NULL
        FROM latest l JOIN memory_event e ON e.id = l.id JOIN memory_node n ON n.id = l.node_id
        WHERE (e.kind = 'decayed') != (n.decayed_at IS NOT NULL)
        """
    )
    return [
        f"node {node_id} is {'decayed' if decayed else 'live'} but its latest lifecycle event "
        f"is {kind}"
        for node_id, kind, decayed in rows
    ]


def permanent_without_event() -> list[str]:
    return [
        f"node {node_id} is permanent but has no promoted_permanent event"
        for (node_id,) in _rows(
            """SELECT n.id FROM memory_node n WHERE n.permanent = 1 AND NOT EXISTS
               (SELECT 1 FROM memory_event e WHERE e.node_id = n.id
                AND e.kind = 'promoted_permanent')"""
        )
    ]


def edges_touching_missing_nodes() -> list[str]:
    return [
        f"edge {edge_id} ({src} -> {dst}) touches a missing node"
        for edge_id, src, dst in _rows(
            """SELECT e.id, e.from_node_id, e.to_node_id FROM memory_edge e
               WHERE NOT EXISTS (SELECT 1 FROM memory_node n WHERE n.id = e.from_node_id)
                  OR NOT EXISTS (SELECT 1 FROM memory_node n WHERE n.id = e.to_node_id)"""
        )
    ]


def fts_out_of_sync() -> list[str]:
    """Every node has exactly its row in the full-text index, and the index matches the bodies."""
    found = [
        f"node {node_id} has no full-text row"
        for (node_id,) in _rows(
            """SELECT id FROM memory_node WHERE id NOT IN
               (SELECT id FROM memory_node_fts_docsize)"""
        )
    ]
    found += [
        f"full-text row {row_id} has no node"
        for (row_id,) in _rows(
            """SELECT id FROM memory_node_fts_docsize WHERE id NOT IN
               (SELECT id FROM memory_node)"""
        )
    ]
    try:
        # FTS5's own check compares the index with the content table, token by token.
        _rows("INSERT INTO memory_node_fts(memory_node_fts, rank) VALUES ('integrity-check', 1)")
    except DatabaseError as exc:
        found.append(f"full-text index disagrees with node bodies: {exc}")
    return found


CHECKS: dict[str, Callable[[], list[str]]] = {
    "permanent_but_decayed": permanent_but_decayed,
    "decayed_without_event": decayed_without_event,
    "lifecycle_flag_disagrees_with_latest_event": lifecycle_flag_disagrees_with_latest_event,
    "permanent_without_event": permanent_without_event,
    "edges_touching_missing_nodes": edges_touching_missing_nodes,
    "fts_out_of_sync": fts_out_of_sync,
}


def run_checks(names: list[str] | None = None) -> list[CheckResult]:
    """Run the named checks (all by default); each result lists up to MAX_EXAMPLES violations
    plus a count line when there are more."""
    results = []
    for name, check in CHECKS.items():
        if names and name not in names:
            continue
        violations = check()
        if len(violations) > MAX_EXAMPLES:
            extra = len(violations) - MAX_EXAMPLES
            violations = [*violations[:MAX_EXAMPLES], f"... and {extra} more"]
        results.append(CheckResult(name, violations))
    return results
