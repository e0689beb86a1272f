"""Acts on many nodes as one batch on the record, and their undo.

A batch is the owner's one confirmed act over many nodes (let go, keep, decline, restore,
release): each of its events carries the same `detail["batch"]` (a random hex id) and the
filter it was chosen by in words (`detail["filter"]`). The id lives in the detail because the
detail is hashed into the chain (memory/chain.py): the batch is covered by integrity with no
second hashing rule, export and import carry it, and nothing else need change. Migration 0023
indexes it (BATCH_SQL is the indexed expression; lookups use the same text so the index serves).

Undo is itself a batch (its events carry their own id and `detail["undoes"]`), allowed within
UNDO_WINDOW of the act and once. It puts back what the act changed, node by node, and skips a
node a later act has decided on: rooted, sealed or rejected since the batch, or already changed
again (restored, decayed, proposed or declined since). Store clock (Event.at).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from memory import audit, reach
from memory.chunks import chunks
from memory.errors import Conflict, NotFound
from memory.models import DecayReason, Event, EventKind, Node
from memory.trust import WORDLESS, trust_map

UNDO_WINDOW = timedelta(days=1)
UNDONE_REASON = "batch_undone"  # the reason of the events an undo writes
# Acts made since a batch that an undo never overrides: they are the owner's later word.
_LATER_WORD = (EventKind.ROOTED, EventKind.SEALED, EventKind.REJECTED, EventKind.SUPERSEDED)


def batch_sql(column: str = "detail") -> str:
    """The batch id of an event row as SQL: the expression migration 0023 indexes (`column`
    qualifies it in a join, memory_event.detail)."""
    if connection.vendor == "postgresql":
        return f"({column} ->> 'batch')"
    return f"json_extract({column}, '$.batch')"


BATCH_ID = re.compile(r"[0-9a-f]{16}")  # what new_batch gives


def new_batch() -> str:
    return secrets.token_hex(8)


def tag(batch: str, words: str, **extra: Any) -> dict[str, Any]:
    """The detail every event of a batch carries."""
    return {"batch": batch, "filter": words, **extra}


@dataclass
class Outcome:
    """What a batch did: its id, the nodes it changed, and those it left as they were (why)."""

    batch: str
    done: list[int] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)


def batch_events(batch: str) -> list[Event]:
    """The events of one batch, in id order (the index on batch_sql() serves it); their
    snapshots are deferred (parsing 10,000 of them was a third of an undo's time)."""
    return list(
        Event.objects.raw(
            "SELECT id, at, kind, node_id, actor, reason, related_node_id, detail FROM memory_event"
            f" WHERE {batch_sql()} = %s ORDER BY id",
            [batch],
        )
    )


def _undone(batch: str, *, after: int) -> bool:
    """Whether an undo of `batch` is on the record (undo runs once). Its events come after the
    batch's last event `after`, so the scan starts there."""
    undoes = (
        "(detail ->> 'undoes')"
        if connection.vendor == "postgresql"
        else "json_extract(detail, '$.undoes')"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM memory_event WHERE id > %s AND reason = %s AND {undoes} = %s LIMIT 1",
            [after, UNDONE_REASON, batch],
        )
        return cursor.fetchone() is not None


def _changed_since(ids: list[int], after: int, kinds: tuple[str, ...]) -> set[int]:
    """Nodes in `ids` with an event of `kinds` after event id `after`."""
    found: set[int] = set()
    for chunk in chunks(ids):
        found.update(
            Event.objects.filter(node_id__in=chunk, pk__gt=after, kind__in=kinds).values_list(
                "node_id", flat=True
            )
        )
    found.discard(None)
    return found


def let_go_many(ids: list[int], *, actor: str, words: str, batch: str = "") -> Outcome:
    """The owner lets many nodes go now, as one batch: each live node that is not permanent,
    ground, proposed or sealed is decayed (reason owner_let_go); the rest are left as they were,
    each with its reason. One transaction, one UPDATE and one audit write per 900 nodes.
    `batch`: join a batch already begun (the queue declines each proposal, then lets it go)."""
    out = Outcome(batch or new_batch())
    with transaction.atomic():
        nodes: dict[int, tuple[int, datetime | None, bool]] = {}
        for chunk in chunks(ids):
            rows = Node.objects.filter(pk__in=chunk).values_list("id", "decayed_at", "permanent")
            nodes.update((row[0], row) for row in rows)
        trusts = trust_map(list(nodes))
        for node_id in ids:
            row = nodes.get(node_id)
            if row is None:
                out.skipped[node_id] = "does not exist"
            elif row[1] is not None:
                out.skipped[node_id] = "already decayed"
            elif row[2]:
                out.skipped[node_id] = "permanent"
            elif trusts[node_id] in reach.PROTECTED_TRUST:
                out.skipped[node_id] = str(trusts[node_id])
            else:
                out.done.append(node_id)
        _flag_decayed(
            out.done, actor=actor, reason=DecayReason.OWNER_LET_GO, detail=tag(out.batch, words)
        )
    return out


def _flag_decayed(ids: list[int], *, actor: str, reason: str, detail: dict[str, Any]) -> None:
    """Let `ids` go now: the flag and each node's decayed event, one instant for both (inside
    the caller's transaction)."""
    now = timezone.now()
    for chunk in chunks(ids):
        Node.objects.filter(pk__in=chunk).update(decayed_at=now)
    audit.record_many(EventKind.DECAYED, ids, actor=actor, reason=reason, detail=detail, at=now)


def restore_many(ids: list[int], *, actor: str, words: str) -> Outcome:
    """The owner restores many decayed nodes as one batch: each comes back as the owner's restore
    (reason owner_restore: a root from now on) with every decayed node it holds (reason
    held_by_restore, in the same batch, so its undo lets them go too). A sealed or rejected node
    is left as it was, as is a live or missing one. Restoring is not reading: access counts are
    untouched. One transaction."""
    out = Outcome(new_batch())
    detail = tag(out.batch, words)
    with transaction.atomic():
        decayed: set[int] = set()
        for chunk in chunks(ids):
            decayed.update(
                Node.objects.filter(pk__in=chunk, decayed_at__isnull=False).values_list(
                    "id", flat=True
                )
            )
        trusts = trust_map(sorted(decayed))
        for node_id in ids:
            if node_id not in decayed:
                out.skipped[node_id] = "live or missing"
            elif trusts[node_id] in WORDLESS:
                out.skipped[node_id] = str(trusts[node_id])
            else:
                out.done.append(node_id)
        for chunk in chunks(out.done):
            Node.objects.filter(pk__in=chunk).update(decayed_at=None)
        audit.record_many(
            EventKind.RESTORED, out.done, actor=actor, reason=reach.OWNER_RESTORE, detail=detail
        )
        for node_id in out.done:
            reach.restore_held(node_id, actor=actor, reason=reach.HELD_BY_RESTORE, detail=detail)
    return out


def keep_many(ids: list[int], *, actor: str, words: str) -> Outcome:
    """The owner keeps many live nodes as one batch: a kept event each (a root from now on; a
    keep is its own reason, not a read). A decayed node is left as it was: restore it first."""
    out = Outcome(new_batch())
    with transaction.atomic():
        live: set[int] = set()
        for chunk in chunks(ids):
            live.update(
                Node.objects.filter(pk__in=chunk, decayed_at__isnull=True).values_list(
                    "id", flat=True
                )
            )
        out.done = [i for i in ids if i in live]
        out.skipped = {i: "decayed or missing" for i in ids if i not in live}
        audit.record_many(
            EventKind.KEPT, out.done, actor=actor, reason="owner_keep", detail=tag(out.batch, words)
        )
    return out


def _undo_let_go(events: list[Event], out: Outcome, *, actor: str, after: int) -> None:
    ids = [e.node_id for e in events if e.node_id is not None]
    later = _changed_since(ids, after, (*_LATER_WORD, EventKind.RESTORED, EventKind.REVIVED))
    still: set[int] = set()
    for chunk in chunks(ids):
        still.update(
            Node.objects.filter(pk__in=chunk, decayed_at__isnull=False).values_list("id", flat=True)
        )
    for node_id in ids:
        if node_id in later or node_id not in still:
            out.skipped[node_id] = "decided on or brought back since"
        else:
            out.done.append(node_id)
    for chunk in chunks(out.done):
        Node.objects.filter(pk__in=chunk).update(decayed_at=None)


def undoable(batch: str, *, now: datetime | None = None) -> list[Event]:
    """The events of `batch`, if it can still be undone (store clock). Refuses (NotFound) an
    unknown batch, (Conflict) an undo itself, one already undone, or one older than
    UNDO_WINDOW."""
    now = now or timezone.now()
    events = batch_events(batch)
    if not events:
        raise NotFound(f"no batch {batch!r} on the record")
    if events[0].reason == UNDONE_REASON:
        raise Conflict("an undo is not undone; act again instead", code="no_undo")
    if now - events[0].at > UNDO_WINDOW:
        raise Conflict(
            f"batch {batch} is older than a day; undo each node on its own", code="undo_window"
        )
    if _undone(batch, after=events[-1].pk):
        raise Conflict(f"batch {batch} was already undone", code="undone")
    return events


def undo_words(events: list[Event]) -> str:
    return f"undo of {events[0].detail.get('filter') or 'a batch'}"


def undo_let_go(events: list[Event], *, actor: str, batch: str, undoes: str) -> Outcome:
    """Restore the nodes the owner let go in `events` (the let-go events of batch `undoes`), as
    part of the undo batch `batch`: not as the owner's restore, so a node comes back as it was,
    no root. Skips a node decided on or brought back since. One transaction."""
    out = Outcome(batch)
    let_go = [e for e in events if e.kind == EventKind.DECAYED]
    if not let_go:
        return out
    with transaction.atomic():
        _undo_let_go(let_go, out, actor=actor, after=events[-1].pk)
        audit.record_many(
            EventKind.RESTORED,
            out.done,
            actor=actor,
            reason=UNDONE_REASON,
            detail=tag(batch, undo_words(events), undoes=undoes),
        )
    return out


def undo_restore(events: list[Event], *, actor: str, batch: str, undoes: str) -> Outcome:
    """Let go again the nodes restored in `events` (the restored events of batch `undoes`), as
    part of the undo batch `batch`: decayed, reason batch_undone. Skips a node decided on,
    kept or let go since, and one no longer live. One transaction."""
    out = Outcome(batch)
    restored = [e.node_id for e in events if e.kind == EventKind.RESTORED and e.node_id]
    if not restored:
        return out
    with transaction.atomic():
        after = events[-1].pk
        later = _changed_since(restored, after, (*_LATER_WORD, EventKind.KEPT, EventKind.DECAYED))
        still: set[int] = set()
        for chunk in chunks(restored):
            still.update(
                Node.objects.filter(pk__in=chunk, decayed_at__isnull=True).values_list(
                    "id", flat=True
                )
            )
        for node_id in restored:
            if node_id in later or node_id not in still:
                out.skipped[node_id] = "decided on or used since"
            else:
                out.done.append(node_id)
        _flag_decayed(
            out.done,
            actor=actor,
            reason=UNDONE_REASON,
            detail=tag(batch, undo_words(events), undoes=undoes),
        )
    return out


def undo(batch: str, *, actor: str, now: datetime | None = None) -> Outcome:
    """Undo a let-go batch as a batch of its own (store clock): each node the act let go comes
    back, unless a later act decided on it (see the module docstring). Refuses as undoable()
    does, and (Conflict) a batch with nothing the engine can undo (a decline's undo is a
    ceremony: review/bulk.py)."""
    with transaction.atomic():
        events = undoable(batch, now=now)
        if events[0].kind == EventKind.RESTORED:
            return undo_restore(events, actor=actor, batch=new_batch(), undoes=batch)
        if not any(e.kind == EventKind.DECAYED for e in events):
            raise Conflict(f"a batch of {events[0].kind} events cannot be undone", code="no_undo")
        return undo_let_go(events, actor=actor, batch=new_batch(), undoes=batch)
