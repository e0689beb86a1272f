"""The hash chain over the audit log: Grove's tamper-evident record (DESIGN.md, Custody).

Every event's chain_hash is sha256 of the previous event's chain_hash and the event's canonical
JSON (at, kind, node, actor, reason, related node, snapshot, detail, token), in id order; the
first event chains to GENESIS. Nodes join the chain through their `arrived` event, whose
snapshot carries the node's body_hash and immutable columns (integrity compares them).

Like Git's commits (and RFC 6962's log, without the tree), an edit anywhere changes that entry's
hash, and the edited entry is the first whose recomputed hash differs from the stored one; an
entry rewritten with a fresh hash breaks its successor's link instead. Verification
(memory/custody/chain_verify.py: from a checkpoint, against the anchor file) names the first entry
that breaks; this module holds the hashing, for the writer and the verifier alike.

The tail is read under the write lock: on SQLite every transaction is BEGIN IMMEDIATE, so the
writer that reads the tail is the only writer until it commits; on PostgreSQL every transaction
takes Grove's advisory write lock first (grove/postgresql/base.py), which does the same.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.utils import timezone

GENESIS = "0" * 64
_BATCH = 2000


_PLAIN = frozenset((str, int, bool, type(None)))
_KEYS = frozenset((str,))


def canonical(value: Any) -> Any:
    """The value as JSON will give it back (int keys become strings, tuples lists). A flat dict
    of plain str / int / bool / None values (every snapshot) already is: it is returned as it
    is, which spares a sweep two JSON passes per event."""
    if (
        isinstance(value, dict)
        and _KEYS.issuperset(map(type, value))
        and _PLAIN.issuperset(map(type, value.values()))
    ):
        return value
    return json.loads(json.dumps(value))


def _instant(value: datetime | str) -> str:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if timezone.is_naive(value):
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


# The canonical JSON encoder: sorted keys, compact, UTF-8 (json.dumps with these arguments).
_ENCODE = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode


def canonical_text(value: Any) -> str:
    """The canonical JSON text of `value` (pass it through canonical() first, unless it is)."""
    return _ENCODE(value)


def _id_text(value: int | None) -> str:
    """An id's JSON (an int's is its repr; anything else goes through the encoder)."""
    if value is None:
        return "null"
    return str(value) if type(value) is int else _ENCODE(value)


def _content(
    prev: str,
    at: str,
    kind: str,
    node: str,
    actor: str,
    reason: str,
    related_node: str,
    snapshot: str,
    detail: str,
    token: str,
) -> str:
    """An event's canonical JSON from its fields' canonical texts, keys in sorted order: the
    text json.dumps(content, sort_keys=True, ...) gives, spelled out so that a batch encodes its
    shared fields once and each snapshot once (tests/engine/test_chain.py holds them equal)."""
    return (
        f'{{"actor":{actor},"at":{at},"detail":{detail},"kind":{kind},"node":{node},'
        f'"prev":{prev},"reason":{reason},"related_node":{related_node},'
        f'"snapshot":{snapshot},"token":{token}}}'
    )


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def event_digest(
    *,
    prev: str,
    at: datetime | str,
    kind: str,
    node_id: int | None,
    actor: str,
    reason: str,
    related_node_id: int | None,
    snapshot: Any,
    detail: Any,
    token_id: int | None,
    canonical_already: bool = False,
) -> str:
    """sha256 hex of the previous hash and this event's canonical JSON (sorted keys, UTF-8).
    `canonical_already`: snapshot and detail were just parsed from JSON text (the verifier
    reading SQLite), which the round trip through canonical() would give back unchanged."""
    if not canonical_already:
        snapshot, detail = canonical(snapshot or {}), canonical(detail or {})
    return _digest(
        prev,
        at,
        kind,
        node_id,
        actor,
        reason,
        related_node_id,
        _ENCODE(snapshot or {}),
        _ENCODE(detail or {}),
        token_id,
    )


def _digest(
    prev: str,
    at: datetime | str,
    kind: str,
    node_id: int | None,
    actor: str,
    reason: str,
    related_node_id: int | None,
    snapshot_text: str,
    detail_text: str,
    token_id: int | None,
) -> str:
    """The digest of one event whose snapshot and detail are already canonical JSON text."""
    return _sha(
        _content(
            _ENCODE(prev),
            _ENCODE(_instant(at)),
            _ENCODE(str(kind)),
            _id_text(node_id),
            _ENCODE(actor),
            _ENCODE(reason),
            _id_text(related_node_id),
            snapshot_text,
            detail_text,
            _id_text(token_id),
        )
    )


def chain_many(
    prev: str,
    events: list[tuple[int, int | None, str]],
    *,
    at: datetime | str,
    kind: str,
    actor: str,
    reason: str,
    detail: Any,
) -> list[str]:
    """The chain hashes of a run of events sharing their time, kind, actor, reason and detail,
    with no token, each linked to the one before it from `prev`: `events` holds (node id,
    related node id, canonical_text(canonical(snapshot))) in id order. Equal to event_digest
    one at a time (tests/engine/test_chain.py); the shared fields are encoded once."""
    # _content's text, cut where the fields that differ from event to event go (one spelling of
    # the layout, _content's): the rest is shared. The cuts are control characters, which no
    # field's JSON holds raw (the encoder escapes them).
    head, rest = _content(
        "\0",
        _ENCODE(_instant(at)),
        _ENCODE(str(kind)),
        "\1",
        _ENCODE(actor),
        _ENCODE(reason),
        "\2",
        "\3",
        _ENCODE(canonical(detail or {})),
        "null",
    ).split("\1")
    between, rest = rest.split("\0")
    middle, rest = rest.split("\2")
    before_snapshot, tail = rest.split("\3")
    hashes = []
    for node_id, related_id, snapshot_text in events:
        text = (
            f'{head}{_id_text(node_id)}{between}"{prev}"{middle}{_id_text(related_id)}'
            f"{before_snapshot}{snapshot_text or '{}'}{tail}"
        )  # a hex digest's JSON is itself in quotes
        prev = _sha(text)
        hashes.append(prev)
    return hashes


_TAIL = "SELECT chain_hash FROM memory_event ORDER BY id DESC LIMIT 1"


def tail_hash() -> str:
    """The chain hash of the last event. Must run inside the writer's transaction: a transaction
    holds the write lock from its start (SQLite BEGIN IMMEDIATE; on PostgreSQL the advisory lock
    grove/postgresql/base.py takes first), so no other writer can append between this read and
    the caller's insert."""
    if not connection.in_atomic_block:
        raise RuntimeError("the chain tail is read only under the write lock (in a transaction)")
    with connection.cursor() as cursor:
        cursor.execute(_TAIL)
        row = cursor.fetchone()
    return (row[0] or GENESIS) if row else GENESIS


_COLUMNS = (
    "id, at, kind, node_id, actor, reason, related_node_id, snapshot, detail, token_id, chain_hash"
)


def event_rows(after: int) -> Iterator[tuple[Any, ...]]:
    """Events after id `after`, in id order, read raw in batches (what is in the file)."""
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {_COLUMNS} FROM memory_event WHERE id > %s ORDER BY id LIMIT %s",
                [after, _BATCH],
            )
            rows = cursor.fetchall()
        if not rows:
            return
        yield from rows
        after = rows[-1][0]


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _as_stored(row: tuple[Any, ...], prev: str) -> str | None:
    """The digest over the row's snapshot and detail texts as they are stored, when both may be
    canonical JSON (audit.record_many stores it so) and the digest is the stored hash; else None.
    A match proves these very texts were chained, so no parse and re-encode is needed (~20 us
    an event); any other text, or a mismatch, is verified the full way. `": ` is how the ORM's
    JSON (json.dumps' default separators) always spells a key, and compact JSON never does
    outside a string, so it tells which texts cannot match without hashing them."""
    _id, at, kind, node_id, actor, reason, related, snapshot, detail, token_id, stored = row
    if type(snapshot) is not str or type(detail) is not str:
        return None
    if '": ' in snapshot or '": ' in detail:
        return None
    digest = _digest(prev, at, kind, node_id, actor, reason, related, snapshot, detail, token_id)
    return digest if digest == stored else None


def digest_of_row(row: tuple[Any, ...], prev: str) -> str:
    fast = _as_stored(row, prev)
    if fast is not None:
        return fast
    _id, at, kind, node_id, actor, reason, related, snapshot, detail, token_id, _hash = row
    return event_digest(
        prev=prev,
        at=at,
        kind=kind,
        node_id=node_id,
        actor=actor,
        reason=reason,
        related_node_id=related,
        snapshot=_json(snapshot),
        detail=_json(detail),
        token_id=token_id,
        canonical_already=isinstance(snapshot, str) and isinstance(detail, str),
    )
