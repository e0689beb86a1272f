"""Packets: what recall, walk and the dashboard hand back about a node, a preview and never the
body: the rows they are built from (one read for many ids, with the reranker's signals when asked)
and the bounded excerpt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

EXCERPT_CHARS = 240


# A preview row: the body's head (EXCERPT_CHARS + 1 characters) and whether the body goes on past
# it; then, for the reranker (memory.recall.rerank), the node's parent and its mentions.
_ROW = (
    "id, jurisdiction, kind, substr(body, 1, %s), substr(body, %s, 1) <> '', source, signature,"
    " COALESCE(referent_time, created_at)"
)
_SIGNALS = (
    ", (SELECT min(e.to_node_id) FROM memory_edge e WHERE e.from_node_id = memory_node.id"
    " AND e.kind = 'derived_from'), (SELECT {lines} FROM memory_mention m"
    " WHERE m.node_id = memory_node.id)"
)
_LINES = {
    "postgresql": "string_agg(m.kind || ':' || m.entity, chr(10))",
    "sqlite": "group_concat(m.kind || ':' || m.entity, char(10))",
}
_KEYS = ("id", "jurisdiction", "kind", "body", "more", "source", "signature", "when")


def preview_rows(node_ids: Sequence[int], *, parents: bool = False) -> dict[int, dict[str, Any]]:
    """Rows by id: the body's head and whether the body goes on past it ("more"). With
    `parents` each also has its "parent" (derived_from, lowest id, or None) and its "mentions"
    (its Mention rows as "kind:entity" lines, or None): the reranker's signals, read with the
    row rather than by queries of their own (memory.recall.rerank)."""
    if not node_ids:
        return {}
    marks = ",".join(["%s"] * len(node_ids))
    keys = (*_KEYS, "parent", "mentions") if parents else _KEYS
    signals = _SIGNALS.format(lines=_LINES[connection.vendor]) if parents else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_ROW}{signals} FROM memory_node WHERE id IN ({marks})",
            [EXCERPT_CHARS + 1, EXCERPT_CHARS + 2, *node_ids],
        )
        return {row[0]: dict(zip(keys, row, strict=True)) for row in cursor.fetchall()}


def excerpt_of(text: str, *, more: bool = False) -> str:
    """A bounded preview: at most EXCERPT_CHARS characters, an ellipsis when cut. `more` says
    that `text` is only the head of a longer body: cut, even when its folded spaces fit."""
    text = " ".join(text.split())
    if len(text) <= EXCERPT_CHARS and not more:
        return text
    return text[: EXCERPT_CHARS - 1].rstrip() + "…"


def packet(row: dict[str, Any], *, trust: str, score: float | None = None) -> dict[str, Any]:
    """A preview: jurisdiction first (why it is here), never the body."""
    result: dict[str, Any] = {
        "jurisdiction": row["jurisdiction"],
        "id": row["id"],
        "trust": trust,
        "kind": row["kind"],
        "excerpt": excerpt_of(row["body"], more=bool(row["more"])),
        "source": row["source"],
    }
    if score is not None:
        result["score"] = round(float(score), 6)
    return result
