"""The audit writer: the only code that writes Event rows.

Each event is written inside the caller's transaction, with a snapshot of the node read on the
caller's connection, so a flag and its event commit or roll back together.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import connection
from django.utils import timezone

from memory.models import CEREMONY_EVENT_KINDS, Event, EventKind, Node

EXCERPT_CHARS = 280
_SNAPSHOT_FIELDS = (
    "body",
    "body_hash",
    "kind",
    "jurisdiction",
    "domain",
    "signature",
    "source",
    "access_count",
    "last_accessed_at",
    "permanent",
    "permanent_at",
    "decayed_at",
    "created_at",
    "referent_time",
)


def snapshot(node_id: int) -> dict[str, Any]:
    """What the node is right now, read on the caller's connection (inside its transaction)."""
    row = Node.objects.filter(pk=node_id).values(*_SNAPSHOT_FIELDS).first()
    return {} if row is None else _snapshot_row(row)


def _snapshot_row(row: dict[str, Any]) -> dict[str, Any]:
    body = row.pop("body")
    row["excerpt"] = body[:EXCERPT_CHARS]
    row["body_chars"] = len(body)
    for key, value in row.items():
        if hasattr(value, "isoformat"):
            row[key] = value.isoformat()
    return row


def record(
    kind: EventKind | str,
    *,
    node: Node | int | None,
    actor: str,
    reason: str = "",
    related_node: Node | int | None = None,
    detail: dict[str, Any] | None = None,
    at=None,
) -> Event:
    """Append one event. Must run inside the caller's transaction.

    Refuses ceremony kinds (proposed, rooted, superseded, sealed, unsealed, rejected ...): trust
    changes only through the acts, which write them with record_act.
    """
    kind = EventKind(kind)
    if kind in CEREMONY_EVENT_KINDS:
        raise PermissionError(f"{kind} events are written only by the ceremonies (record_act)")
    return _append(kind, node, actor, reason, related_node, detail, at)


def record_act(
    kind: EventKind | str,
    *,
    node: Node | int,
    actor: str,
    reason: str = "",
    related_node: Node | int | None = None,
    detail: dict[str, Any] | None = None,
) -> Event:
    """Append one ceremony event (a trust-deciding act). Only review/ceremony.py calls this;
    tests/test_layout.py fails the build if any other module imports it."""
    kind = EventKind(kind)
    if kind not in CEREMONY_EVENT_KINDS:
        raise ValueError(f"{kind} is not a ceremony event; use audit.record")
    return _append(kind, node, actor, reason, related_node, detail, None)


def _append(
    kind: EventKind,
    node: Node | int | None,
    actor: str,
    reason: str,
    related_node: Node | int | None,
    detail: dict[str, Any] | None,
    at,
) -> Event:
    if not connection.in_atomic_block:
        raise RuntimeError("audit events must be written inside the caller's transaction")
    node_id = node.pk if isinstance(node, Node) else node
    related_id = related_node.pk if isinstance(related_node, Node) else related_node
    return Event.objects.create(
        at=at or timezone.now(),
        kind=kind,
        node_id=node_id,
        actor=actor,
        reason=reason,
        related_node_id=related_id,
        snapshot=snapshot(node_id) if node_id else {},
        detail=detail or {},
    )


def record_many(
    kind: EventKind | str,
    node_ids: list[int],
    *,
    actor: str,
    reason: str = "",
    related: dict[int, int] | None = None,
    detail: dict[str, Any] | None = None,
    at=None,
) -> int:
    """Append one event per node, snapshotting all of them with one SELECT per 500 ids.

    The bulk twin of record() for sleep's set-based steps: same rules (inside the caller's
    transaction, on its connection, so each flag and its event commit together), but never for
    ceremony kinds, which are one act at a time. `related` maps node id -> related node id.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("audit.record_many must run inside the caller's transaction")
    kind = EventKind(kind)
    if kind in CEREMONY_EVENT_KINDS:
        raise PermissionError(f"{kind} events are written one at a time by the ceremonies")
    at = at or timezone.now()
    related = related or {}
    rows = []
    when = connection.ops.adapt_datetimefield_value(at)
    extra = json.dumps(detail or {})
    for start in range(0, len(node_ids), 500):
        chunk = node_ids[start : start + 500]
        found = Node.objects.filter(pk__in=chunk).values("id", *_SNAPSHOT_FIELDS)
        snaps = {row.pop("id"): _snapshot_row(row) for row in found}
        rows += [
            (when, kind.value, node_id, actor, reason, related.get(node_id),
             json.dumps(snaps.get(node_id, {})), extra)
            for node_id in chunk
        ]  # fmt: skip
    # One prepared INSERT for all rows: the ORM's bulk_create spends ~0.2 ms a row preparing
    # fields, which made a sweep of 30k nodes take seconds (bench/sleep_bench.py).
    with connection.cursor() as cursor:
        cursor.executemany(
            """INSERT INTO memory_event (at, kind, node_id, actor, reason, related_node_id,
               snapshot, detail) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
            rows,
        )
    return len(rows)
