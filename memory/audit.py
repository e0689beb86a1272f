"""The audit writer: the only code that writes Event rows.

Each event is written inside the caller's transaction, with a snapshot of the node read on the
caller's connection, so a flag and its event commit or roll back together. Each carries its
link in the hash chain (memory/chain.py), computed from the tail read under the same write lock.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.utils import timezone

from memory.chain import canonical, canonical_text, chain_many, event_digest, tail_hash
from memory.models import CEREMONY_EVENT_KINDS, ApiToken, Event, EventKind, Node

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


_TIMES = frozenset(
    ("last_accessed_at", "permanent_at", "decayed_at", "created_at", "referent_time")
)


def _instant(value: datetime | str | None) -> str | None:
    """A raw datetime column as the ORM gives it back, in isoformat: SQLite holds naive UTC
    (text, or a naive datetime through Django's registered converter), PostgreSQL is aware."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return (value.replace(tzinfo=UTC) if value.tzinfo is None else value).isoformat()


# The columns snapshots_from_rows reads, after the node id: a caller that has just changed
# the nodes reads them back in the same statement (UPDATE ... RETURNING id, SNAPSHOT_COLUMNS).
SNAPSHOT_COLUMNS = ", ".join(_SNAPSHOT_FIELDS)


def snapshots_from_rows(rows: list[tuple]) -> dict[int, dict[str, Any]]:
    """snapshot() of each raw row (id, SNAPSHOT_COLUMNS...), by node id: the ORM's per-field
    converters cost more than the rest of a sweep (tests/test_audit_many.py holds them equal).
    A raw row's other values are plain already, so only the clocks and the body are rewritten;
    an instant shared by many rows (a sweep's decayed_at) is formatted once."""
    found: dict[int, dict[str, Any]] = {}
    instants: dict[Any, str | None] = {None: None}
    for node_id, *values in rows:
        row = dict(zip(_SNAPSHOT_FIELDS, values, strict=True))
        for key in _TIMES:
            value = row[key]
            if value not in instants:
                instants[value] = _instant(value)
            row[key] = instants[value]
        row["permanent"] = bool(row["permanent"])
        body = row.pop("body")
        row["excerpt"] = body[:EXCERPT_CHARS]
        row["body_chars"] = len(body)
        found[node_id] = row
    return found


def _snapshots(node_ids: list[int]) -> dict[int, dict[str, Any]]:
    """snapshot() of many nodes, one raw SELECT per 900 ids."""
    found: dict[int, dict[str, Any]] = {}
    for start in range(0, len(node_ids), 900):
        chunk = node_ids[start : start + 900]
        marks = ",".join(["%s"] * len(chunk))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, {SNAPSHOT_COLUMNS} FROM memory_node WHERE id IN ({marks})", chunk
            )
            found.update(snapshots_from_rows(cursor.fetchall()))
    return found


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
    token: ApiToken | None = None,
    snap: dict[str, Any] | None = None,
) -> Event:
    """Append one event. Must run inside the caller's transaction. `token` is the agent token
    the act came through; `snap` a snapshot the caller already holds (the write path's arrival).

    Refuses ceremony kinds (proposed, rooted, superseded, sealed, unsealed, rejected ...): trust
    changes only through the acts, which write them with record_act.
    """
    kind = EventKind(kind)
    if kind in CEREMONY_EVENT_KINDS:
        raise PermissionError(f"{kind} events are written only by the ceremonies (record_act)")
    return _append(kind, node, actor, reason, related_node, detail, at, token, snap)


def record_act(
    kind: EventKind | str,
    *,
    node: Node | int,
    actor: str,
    reason: str = "",
    related_node: Node | int | None = None,
    detail: dict[str, Any] | None = None,
    token: ApiToken | None = None,
) -> Event:
    """Append one ceremony event (a trust-deciding act). Only review/ceremony.py calls this;
    tests/test_layout.py fails the build if any other module imports it."""
    kind = EventKind(kind)
    if kind not in CEREMONY_EVENT_KINDS:
        raise ValueError(f"{kind} is not a ceremony event; use audit.record")
    return _append(kind, node, actor, reason, related_node, detail, None, token, None)


def _append(
    kind: EventKind,
    node: Node | int | None,
    actor: str,
    reason: str,
    related_node: Node | int | None,
    detail: dict[str, Any] | None,
    at,
    token: ApiToken | None,
    snap: dict[str, Any] | None,
) -> Event:
    if not connection.in_atomic_block:
        raise RuntimeError("audit events must be written inside the caller's transaction")
    node_id = node.pk if isinstance(node, Node) else node
    related_id = related_node.pk if isinstance(related_node, Node) else related_node
    event = Event(
        at=at or timezone.now(),
        kind=kind,
        node_id=node_id,
        actor=actor,
        reason=reason,
        related_node_id=related_id,
        snapshot=snap if snap is not None else (snapshot(node_id) if node_id else {}),
        detail=detail or {},
        token=token,
    )
    event.chain_hash = _digest(event, tail_hash())
    event.save(force_insert=True)
    return event


def _digest(event: Event, prev: str) -> str:
    return event_digest(
        prev=prev,
        at=event.at,
        kind=event.kind,
        node_id=event.node_id,
        actor=event.actor,
        reason=event.reason,
        related_node_id=event.related_node_id,
        snapshot=event.snapshot,
        detail=event.detail,
        token_id=event.token_id,
    )


def node_snapshot(node: Node) -> dict[str, Any]:
    """The snapshot of a node the caller holds in memory (the row it just inserted)."""
    return _snapshot_row({field: getattr(node, field) for field in _SNAPSHOT_FIELDS})


def record_many(
    kind: EventKind | str,
    node_ids: list[int],
    *,
    actor: str,
    reason: str = "",
    related: dict[int, int] | None = None,
    detail: dict[str, Any] | None = None,
    at=None,
    snapshots: dict[int, dict[str, Any]] | None = None,
) -> int:
    """Append one event per node, snapshotting all of them with one raw SELECT per 900 ids, or
    taking `snapshots` (node id -> snapshots_from_rows) that the caller read in this transaction
    with the change itself.

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
    when = connection.ops.adapt_datetimefield_value(at)
    extra_text = json.dumps(detail or {})
    snaps = _snapshots(node_ids) if snapshots is None else snapshots
    # Each snapshot encoded once, canonically: the same text is hashed into the chain and
    # stored (the verifier parses it back to the same value).
    texts = [canonical_text(canonical(snaps.get(node_id, {}))) for node_id in node_ids]
    hashes = chain_many(
        tail_hash(),
        [(n, related.get(n), text) for n, text in zip(node_ids, texts, strict=True)],
        at=at,
        kind=kind.value,
        actor=actor,
        reason=reason,
        detail=detail,
    )
    rows = [
        (when, kind.value, n, actor, reason, related.get(n), text, extra_text, digest)
        for n, text, digest in zip(node_ids, texts, hashes, strict=True)
    ]
    _insert_events(rows)
    return len(rows)


_EVENT_ROWS_PER_INSERT = 900  # 9 parameters a row: under SQLite's 32,766 and PostgreSQL's 65,535


def _insert_events(rows: list[tuple]) -> None:
    """Insert events in id order, many rows a statement. The ORM's bulk_create spends ~0.2 ms a
    row preparing fields; executemany runs one statement a row, and on SQLite each statement on
    a table with triggers opens a statement journal that copies every page it touches: 35 us a
    row at 100k nodes, against 13 us in statements of many rows (bench/sleep_bench.py). The
    rows of one VALUES list take their ids in its order, which the chain needs."""
    with connection.cursor() as cursor:
        for start in range(0, len(rows), _EVENT_ROWS_PER_INSERT):
            part = rows[start : start + _EVENT_ROWS_PER_INSERT]
            values = ",".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s)"] * len(part))
            cursor.execute(
                f"""INSERT INTO memory_event (at, kind, node_id, actor, reason, related_node_id,
                    snapshot, detail, chain_hash) VALUES {values}""",
                [value for row in part for value in row],
            )
