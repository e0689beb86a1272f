"""The audit writer: the only code that writes Event rows.

Each event is written inside the caller's transaction, with a snapshot of the node read on the
caller's connection, so a flag and its event commit or roll back together.
"""

from __future__ import annotations

import sys
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
# Only the acts may write trust-deciding events (DESIGN.md, Ceremonies).
_CEREMONY_MODULES = frozenset({"review.ceremony"})


def snapshot(node_id: int) -> dict[str, Any]:
    """What the node is right now, read on the caller's connection (inside its transaction)."""
    row = Node.objects.filter(pk=node_id).values(*_SNAPSHOT_FIELDS).first()
    if row is None:
        return {}
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

    Refuses ceremony kinds (proposed, rooted, superseded, sealed, unsealed, rejected) unless the
    caller is review/ceremony.py: trust changes only through the acts.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("audit.record must run inside the caller's transaction")
    kind = EventKind(kind)
    if kind in CEREMONY_EVENT_KINDS:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller not in _CEREMONY_MODULES:
            raise PermissionError(f"{kind} events are written only by the ceremonies, not {caller}")
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
