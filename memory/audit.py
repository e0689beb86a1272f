"""The audit writer: the only code that writes Event rows.

Each event is written inside the caller's transaction, with a snapshot of the node read on the
caller's connection, so a flag and its event commit or roll back together. Each carries its
link in the hash chain (memory/chain.py), computed from the tail read under the same write lock.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from django.db import connection
from django.utils import timezone

from memory.chain import canonical, canonical_text, chain_many, event_digest, tail_hash
from memory.chunks import chunks
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


def _instant(value: datetime | str | None) -> str | None:
    """A raw datetime column as the ORM gives it back, in isoformat: SQLite holds naive UTC
    (text, or a naive datetime through Django's registered converter), PostgreSQL is aware."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:  # UTC's isoformat is the naive one and its offset, without a copy
        return f"{value.isoformat()}+00:00"
    return value.isoformat()


# The columns snapshot_texts_from_rows reads, after the node id: a caller that has just changed
# the nodes reads them back in the same statement (UPDATE ... RETURNING id, SNAPSHOT_COLUMNS).
SNAPSHOT_COLUMNS = ", ".join(_SNAPSHOT_FIELDS)
_QUOTE = json.encoder.encode_basestring  # a str's canonical JSON (ensure_ascii=False), in C


def _instant_text(value: datetime | str | None, seen: dict[Any, str]) -> str:
    """_instant's canonical JSON; a naive instant (SQLite's) seen before is not formatted again
    (a sweep's decayed_at is one instant for every row). An aware one is formatted each time:
    two equal instants in different offsets must keep their own spelling."""
    if value is None:
        return "null"
    if isinstance(value, str) or value.tzinfo is None:
        if value not in seen:
            seen[value] = f'"{_instant(value)}"'
        return seen[value]
    return f'"{_instant(value)}"'


def snapshot_texts_from_rows(rows: list[tuple[Any, ...]]) -> dict[int, str]:
    """canonical_text(snapshot()) of each raw row (id, SNAPSHOT_COLUMNS...), by node id, spelled
    out key by key in sorted order: a dict and its encoding cost ~12 us a node, a third of a
    sweep's time at 100k (tests/engine/test_audit.py holds the two equal, on any values). A
    column that breaks its type (a NULL body) raises rather than spelling something else."""
    found: dict[int, str] = {}
    seen: dict[Any, str] = {}
    for (
        node_id,
        body,
        body_hash,
        kind,
        jurisdiction,
        domain,
        signature,
        source,
        access_count,
        last_accessed_at,
        permanent,
        permanent_at,
        decayed_at,
        created_at,
        referent_time,
    ) in rows:
        found[node_id] = (
            f'{{"access_count":{int(access_count)!r},"body_chars":{len(body)},'
            f'"body_hash":{_QUOTE(body_hash)},"created_at":{_instant_text(created_at, seen)},'
            f'"decayed_at":{_instant_text(decayed_at, seen)},"domain":{_QUOTE(domain)},'
            f'"excerpt":{_QUOTE(body[:EXCERPT_CHARS])},"jurisdiction":{_QUOTE(jurisdiction)},'
            f'"kind":{_QUOTE(kind)},'
            f'"last_accessed_at":{_instant_text(last_accessed_at, seen)},'
            f'"permanent":{"true" if permanent else "false"},'
            f'"permanent_at":{_instant_text(permanent_at, seen)},'
            f'"referent_time":{_instant_text(referent_time, seen)},'
            f'"signature":{_QUOTE(signature)},"source":{_QUOTE(source)}}}'
        )
    return found


def _snapshot_texts(node_ids: list[int]) -> dict[int, str]:
    """snapshot_texts_from_rows of many nodes, one raw SELECT per 900 ids."""
    found: dict[int, str] = {}
    for chunk in chunks(node_ids):
        marks = ",".join(["%s"] * len(chunk))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, {SNAPSHOT_COLUMNS} FROM memory_node WHERE id IN ({marks})", chunk
            )
            found.update(snapshot_texts_from_rows(cursor.fetchall()))
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
    at: datetime | None = None,
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
    tests/project/test_layout.py fails the build if any other module imports it."""
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
    at: datetime | None,
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


def _plain_numbers(value: Any) -> Any:
    """Integral floats as ints: PostgreSQL's jsonb gives 1e+20 back as an integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _plain_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_numbers(v) for v in value]
    return value


def metadata_hash(metadata: Any) -> str:
    """sha256 of a node's metadata as canonical JSON: the arrival records it, integrity and
    import compare the stored column with it."""
    text = canonical_text(_plain_numbers(canonical(metadata or {})))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    at: datetime | None = None,
    snapshot_texts: dict[int, str] | None = None,
) -> int:
    """Append one event per node, snapshotting all of them with one raw SELECT per 900 ids, or
    taking `snapshot_texts` (node id -> snapshot_texts_from_rows) that the caller read in this
    transaction with the change itself.

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
    extra_text = canonical_text(canonical(detail or {}))  # as the snapshots: see chain._as_stored
    found = _snapshot_texts(node_ids) if snapshot_texts is None else snapshot_texts
    # Each snapshot's canonical text is both hashed into the chain and stored (the verifier
    # parses it back to the same value); a node that is not there has the empty snapshot.
    texts = [found.get(node_id, "{}") for node_id in node_ids]
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


def _insert_events(rows: list[tuple[Any, ...]]) -> None:
    """Insert events in id order, many rows a statement. The ORM's bulk_create spends ~0.2 ms a
    row preparing fields; executemany runs one statement a row, ~35 us a row at 100k nodes, most
    of it a per-statement cost of the table's triggers (~12 us without them); statements of 900
    rows cost ~12 us a row with them (bench/sleep_bench.py). The rows of one VALUES list take
    their ids in its order, which the chain needs."""
    with connection.cursor() as cursor:
        for start in range(0, len(rows), _EVENT_ROWS_PER_INSERT):
            part = rows[start : start + _EVENT_ROWS_PER_INSERT]
            values = ",".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s)"] * len(part))
            cursor.execute(
                f"""INSERT INTO memory_event (at, kind, node_id, actor, reason, related_node_id,
                    snapshot, detail, chain_hash) VALUES {values}""",
                [value for row in part for value in row],
            )


# --- reason codes in words ---------------------------------------------------------------------
# Codes are stable identifiers in the record (and its exports); pages show the words. A reason
# that is not a code (an agent's or the owner's own text) is shown as it was written.

REASON_WORDS: dict[str, str] = {
    # Why a node decayed (DecayReason).
    "age_no_access": "nobody read it and nothing live held it",
    "cascade": "everything it came from had decayed",
    "consolidated": "folded into a synthesis",
    "owner_let_go": "you let it go",
    "unreachable": "nothing alive holds it",
    # What brought a forgotten node back.
    "dug_and_read": "an agent dug it up and read it",
    "held_by_dug": "a node an agent dug up and read holds it",
    "held_by_restore": "a node you restored holds it",
    # The owner's other lifecycle acts.
    "owner_restore": "you restored it",
    "owner_keep": "you kept it",
    "owner_wrote": "you wrote it on the dashboard",
    "owner_release": "you released what sleep held back",
    "batch_undone": "you undid a batch act",
    # Sleep and the write path.
    "reads": "read often enough to become permanent",
    "rearrival": "the same content arrived again",
    "tombstoned": "it was rejected, so its content is a tombstone",
    # The owner's governance of agents (memory/tokens.py, review/ceremony.py).
    "changed": "you changed what the token may do",
    "auto_declined": "declined as it came: you set its agent to auto-decline",
}


def reason_words(code: str | None) -> str:
    """The words for a reason code; any other text unchanged; "" for no reason."""
    if not code:
        return ""
    return REASON_WORDS.get(code, code)
