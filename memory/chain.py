"""The hash chain over the audit log: Grove's tamper-evident record (DESIGN.md, Custody).

Every event's chain_hash is sha256 of the previous event's chain_hash and the event's canonical
JSON (at, kind, node, actor, reason, related node, snapshot, detail, token), in id order; the
first event chains to GENESIS. Nodes join the chain through their `arrived` event, whose
snapshot carries the node's body_hash and immutable columns (integrity compares them).

Like Git's commits (and RFC 6962's log, without the tree), an edit anywhere changes that entry's
hash, and the edited entry is the first whose recomputed hash differs from the stored one; an
entry rewritten with a fresh hash breaks its successor's link instead. Verification names the
first entry that breaks. Someone holding the file could recompute every hash after an edit, so
each verified checkpoint is also appended to an anchor file outside the database
(GROVE_CHAIN_ANCHOR; RFC 6962 publishes its tree heads for the same reason), and integrity
checks the database still carries every anchored hash.

The tail is read under the write lock: on SQLite every transaction is BEGIN IMMEDIATE, so the
writer that reads the tail is the only writer until it commits; on PostgreSQL a transaction-level
advisory lock does the same.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

GENESIS = "0" * 64
_PG_CHAIN_LOCK = 0x67726F7665  # "grove"
_BATCH = 2000
# Sleep verifies incrementally from the last checkpoint; once a week it starts from the first event.
FULL_EVERY = timedelta(days=7)


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
    return json.loads(json.dumps(value, ensure_ascii=False))


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
    shared fields once and each snapshot once (tests/test_chain_text.py holds them equal)."""
    return (
        f'{{"actor":{actor},"at":{at},"detail":{detail},"kind":{kind},"node":{node},'
        f'"prev":{prev},"reason":{reason},"related_node":{related_node},'
        f'"snapshot":{snapshot},"token":{token}}}'
    )


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    one at a time (tests/test_chain_text.py); the shared fields are encoded once."""
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
        node = str(node_id) if type(node_id) is int else _id_text(node_id)
        related = "null" if related_id is None else _id_text(related_id)
        text = (
            f'{head}{node}{between}"{prev}"{middle}{related}{before_snapshot}'
            f"{snapshot_text or '{}'}{tail}"
        )  # a hex digest's JSON is itself in quotes
        prev = hashlib.sha256(text.encode("utf-8")).hexdigest()
        hashes.append(prev)
    return hashes


def tail_hash() -> str:
    """The chain hash of the last event. Must run inside the writer's transaction: the caller
    holds the write lock (SQLite BEGIN IMMEDIATE; an advisory lock on PostgreSQL), so no other
    writer can append between this read and the caller's insert."""
    if not connection.in_atomic_block:
        raise RuntimeError("the chain tail is read only under the write lock (in a transaction)")
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_PG_CHAIN_LOCK])
        cursor.execute("SELECT chain_hash FROM memory_event ORDER BY id DESC LIMIT 1")
        row = cursor.fetchone()
    return (row[0] or GENESIS) if row else GENESIS


_COLUMNS = (
    "id, at, kind, node_id, actor, reason, related_node_id, snapshot, detail, token_id, chain_hash"
)


def event_rows(after: int) -> Iterator[tuple]:
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


def _as_stored(row: tuple, prev: str) -> str | None:
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


def digest_of_row(row: tuple, prev: str) -> str:
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


@dataclass(frozen=True)
class ChainReport:
    first_id: int | None  # the first event verified (None: nothing to verify)
    through_id: int | None  # the last event that verified
    through_hash: str
    count: int
    broken: str | None  # the first break, named; None when the chain holds

    @property
    def ok(self) -> bool:
        return self.broken is None


def verify(*, after: int = 0, prev: str = GENESIS) -> ChainReport:
    """Recompute the chain from the event after id `after` (whose chain hash is `prev`) to the
    tail; stop at the first event whose stored hash differs from the recomputed one."""
    first: int | None = None
    through: int | None = after or None
    count = 0
    for row in event_rows(after):
        event_id, kind, stored = row[0], row[2], row[-1]
        first = event_id if first is None else first
        expected = digest_of_row(row, prev)
        if stored != expected:
            what = "has no chain hash" if not stored else "does not match its content and link"
            return ChainReport(
                first,
                through,
                prev,
                count,
                f"event {event_id} ({kind}) {what}: the record was edited at or before it",
            )
        prev, through, count = stored, event_id, count + 1
    return ChainReport(first, through, prev, count, None)


def full_due(*, now: datetime | None = None) -> bool:
    """True when no full verification is stored from the last FULL_EVERY (store clock)."""
    from memory.models import ChainCheckpoint

    since = (now or timezone.now()) - FULL_EVERY
    return not ChainCheckpoint.objects.filter(full=True, verified_at__gte=since).exists()


def verify_from_checkpoint(*, full: bool | None = False) -> ChainReport:
    """Verify from the last stored checkpoint (from the first event when `full`, when none is
    stored, or, with full=None, when a weekly full run is due), then store a checkpoint through
    the last event verified when the chain holds. Reads the store clock (verified_at).

    The checkpoint's own event must still carry the hash it had when checked; a mismatch there
    is a break too (a full verification names the first edited event)."""
    from django.db import transaction

    from memory.models import ChainCheckpoint, Event

    if full is None:
        full = full_due()
    mark = None if full else ChainCheckpoint.objects.order_by("-id").first()
    after, prev = 0, GENESIS
    if mark is not None:
        held = Event.objects.filter(pk=mark.event_id).values_list("chain_hash", flat=True).first()
        if held != mark.chain_hash:
            return ChainReport(
                None,
                None,
                GENESIS,
                0,
                f"event {mark.event_id} no longer carries the hash verified at "
                f"{mark.verified_at.isoformat()}: run a full verification to find the first edit",
            )
        after, prev = mark.event_id, mark.chain_hash
    report = verify(after=after, prev=prev)
    if report.ok and report.through_id is not None and (report.count or mark is None):
        with transaction.atomic():
            checkpoint = ChainCheckpoint.objects.create(
                event_id=report.through_id, chain_hash=report.through_hash, full=mark is None
            )
        _anchor(checkpoint)
    return report


def _anchor(checkpoint) -> None:
    """Append the checkpoint to the anchor file (after its commit; a line per checkpoint)."""
    path = Path(settings.GROVE_CHAIN_ANCHOR)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = {
        "event_id": checkpoint.event_id,
        "chain_hash": checkpoint.chain_hash,
        "verified_at": checkpoint.verified_at.isoformat(),
    }
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def anchors_disagree() -> list[str]:
    """Anchored checkpoints whose event no longer carries the anchored hash (or is gone): the
    record was rewritten after it was verified, even if its chain now verifies again."""
    path = Path(settings.GROVE_CHAIN_ANCHOR)
    if not path.is_file():
        return []
    anchored: dict[int, tuple[str, str]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            try:
                line = json.loads(text)
                anchored[int(line["event_id"])] = (line["chain_hash"], line["verified_at"])
            except (ValueError, KeyError, TypeError):
                return [f"anchor line {number} is not a checkpoint: the anchor file was edited"]
    from memory.models import Event

    held = dict(Event.objects.filter(pk__in=list(anchored)).values_list("pk", "chain_hash"))
    return [
        f"event {event_id} does not carry the hash anchored at {when}: the record was rewritten"
        for event_id, (digest, when) in sorted(anchored.items())
        if held.get(event_id) != digest
    ]


def last_checkpoint():
    """The latest checkpoint (for the audit page), or None. Reads, never writes."""
    from memory.models import ChainCheckpoint

    return ChainCheckpoint.objects.order_by("-id").first()
