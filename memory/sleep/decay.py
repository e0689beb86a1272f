"""Decay: the sweep half of a mark-and-sweep from the roots (DESIGN.md, "Decay is
reachability"). Every clock here is the store clock (Node.created_at), never the event clock: a
note learned today about something years ago is young.

Mark (memory/reach.py, where the roots, the holding edges and the algorithm are explained): one
BFS from all roots at once over the live holding edges. Sweep: every live node no root reaches
decays with reason `unreachable`, holders before what they hold, in batches of BATCH; each batch
is one UPDATE ... WHERE id IN (...) that re-checks, under the write lock, that the node is still
unread, old and unprotected and that no newer holding edge reaches it, plus its events through
the one audit writer, in one transaction.

The guard on mass forgetting: when what the sweep would collect, less what the owner released,
is more than GROVE_DECAY_GUARD_SHARE of the live nodes (and at least GROVE_DECAY_GUARD_FLOOR
nodes are live), the sweep lets go of none of it and the step says so (held_back, live): an
import forgotten all at once in one night is the owner's decision, not sleep's. The owner's
release (memory/forgetting.py, a decays_released event) names the highest node id pending then;
the next sweep that lets anything go collects those and is then spent, and nodes that arrived
after it are guarded again.

This replaces the one-hop gate (age_no_access) and the cascade; their old events keep their
reasons. The owner's acts on forgetting by day (keep, let go, restore) and the pending list are
in memory/forgetting.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memory import audit, reach
from memory.models import CEREMONY_EVENT_KINDS, DecayReason, Event, EventKind, Node
from memory.visibility import db_time

BATCH = 5000  # nodes per sweep transaction: few commits, each holding the lock ~0.1 s
ACTOR = "sleep"
# Events since the mark that spare a node. The sweep reads them, and the holding edges newer
# than the mark, once a batch through the (kind, at) index and the edge ids (uncorrelated
# NOT IN lists, built once), where a probe per node cost ~16 index seeks a node (one per kind).
_SPARING = ", ".join(
    f"'{k.value}'" for k in (*CEREMONY_EVENT_KINDS, EventKind.KEPT, EventKind.RESTORED)
)


@contextmanager
def _sweep_memory() -> Iterator[None]:
    """On SQLite, the sweep's temporary storage in memory, for the sweep only: each batch's
    multi-row UPDATE and INSERTs keep a statement journal (the pages they change, to undo a
    statement a trigger refuses) and the UPDATE's RETURNING rows in temporary files once past
    64 KiB, and writing and rereading them cost ~4 us a node at 100k (docs/bench/sleep.md,
    the decay step). Bounded by a batch: a few MB. The connection's own setting is put back. SQLite
    refuses the change inside a transaction: a caller's transaction keeps its setting."""
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA temp_store")
        before = int(cursor.fetchone()[0])
        cursor.execute("PRAGMA temp_store = MEMORY")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA temp_store = {before}")


def _min_age(days: float | None) -> float:
    return settings.GROVE_DECAY_MIN_AGE_DAYS if days is None else days


def _sweep(
    ids: list[int],
    *,
    cutoff: datetime,
    since: datetime,
    edge_mark: int,
    edges: tuple[np.ndarray, np.ndarray],
    min_age_days: float | None = None,
) -> tuple[list[int], set[int]]:
    """Flag one batch and write its events in one transaction (BEGIN IMMEDIATE holds the write
    lock): a node read, kept, restored, rooted or newly held since the mark is spared, and so is
    what it holds (`edges`, the mark's), or a live node would hold a decayed one. The UPDATE
    returns each flagged row as it now is: that is its event's snapshot. Returns the flagged
    ids, and the spared nodes with everything they hold (what later batches must spare too)."""
    now = timezone.now()
    with transaction.atomic():
        # Nothing is spared in the usual batch: flag, and undo only if a spared node holds some.
        point = transaction.savepoint_create()
        snapshots = _flag(ids, now=now, cutoff=cutoff, since=since, edge_mark=edge_mark)
        spared = set(ids).difference(snapshots)
        keep = reach.holdings(spared, edges) if spared else set()
        held = keep.intersection(snapshots)
        if held:
            transaction.savepoint_rollback(point)
            rest = [i for i in ids if i not in held]
            snapshots = _flag(rest, now=now, cutoff=cutoff, since=since, edge_mark=edge_mark)
        else:
            transaction.savepoint_commit(point)
        done = sorted(snapshots)
        audit.record_many(
            EventKind.DECAYED,
            done,
            actor=ACTOR,
            reason=DecayReason.UNREACHABLE,
            # The threshold in force: integrity judges each decay by its own (raising the
            # setting later must not make earlier decays look young).
            detail={"min_age_days": _min_age(min_age_days)},
            at=now,
            snapshot_texts=snapshots,
        )
    return done, keep


def _flag(
    ids: list[int], *, now: datetime, cutoff: datetime, since: datetime, edge_mark: int
) -> dict[int, str]:
    """Set decayed_at on those of `ids` still unprotected; their snapshot texts by id."""
    if not ids:
        return {}
    marks = ",".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"""UPDATE memory_node SET decayed_at = %s WHERE id IN ({marks})
                    AND decayed_at IS NULL AND permanent = FALSE AND access_count = 0
                    AND created_at <= %s
                    AND id NOT IN (SELECT node_id FROM memory_event  -- NOT IN fails on a NULL
                        WHERE kind IN ({_SPARING}) AND at > %s AND node_id IS NOT NULL)
                    AND id NOT IN (SELECT to_node_id FROM memory_edge
                        WHERE id > %s AND kind IN ({reach.HOLDING_SQL}))
                    RETURNING id, {audit.SNAPSHOT_COLUMNS}""",
            [db_time(now), *ids, db_time(cutoff), db_time(since), edge_mark],
        )
        return audit.snapshot_texts_from_rows(cursor.fetchall())


def decay(
    *,
    limit: int | None = None,
    dry_run: bool = False,
    beat: Callable[..., None] | None = None,
    now: datetime | None = None,
    min_age_days: float | None = None,
) -> dict[str, Any]:
    """The decay step: mark from the roots, sweep at most `limit` unreachable nodes (holders
    first) in batches of BATCH, unless the guard holds them back (module docstring). Store clock
    only; `now` defaults to the store clock's now. Returns {"count": decayed (or that would be,
    when dry_run), "candidates", "unreachable", "live", "held_back", "released"}."""
    now = now or timezone.now()
    since = timezone.now()
    days = _min_age(min_age_days)
    cutoff = now - timedelta(days=days)
    found = reach.mark(cutoff)
    garbage, held = guard(found.garbage)
    order = reach.holders_first(garbage, found.edges)
    if limit is not None:
        order = order[: max(0, limit)]
    result = {
        "count": 0,
        "candidates": len(found.candidates),
        "unreachable": len(found.garbage),
        **held,
    }
    if dry_run:
        return {**result, "count": len(order)}
    kept: set[int] = set()  # spared since the mark, and what they hold
    with _sweep_memory():
        for start in range(0, len(order), BATCH):
            batch = [i for i in order[start : start + BATCH] if i not in kept]
            done, spared = _sweep(
                batch,
                cutoff=cutoff,
                since=since,
                edge_mark=found.edge_mark,
                edges=found.edges,
                min_age_days=days,
            )
            kept |= spared  # holders come first: what a spared one holds may follow
            result["count"] += len(done)
            if beat:
                beat(**result)
    return result


def release() -> Event | None:
    """The owner's release the next sweep honours: the latest decays_released event, unless a
    sweep has let anything go since it (then it is spent)."""
    latest = Event.objects.filter(kind=EventKind.DECAYS_RELEASED).order_by("-id").first()
    if latest is None:
        return None
    spent = Event.objects.filter(
        kind=EventKind.DECAYED, reason=DecayReason.UNREACHABLE, actor=ACTOR, at__gt=latest.at
    )
    return None if spent.exists() else latest


def guard(garbage: np.ndarray) -> tuple[np.ndarray, dict[str, int]]:
    """What the sweep may collect of `garbage`, and the guard's account (live, held_back,
    released): the released part always; the rest only while it is at most
    GROVE_DECAY_GUARD_SHARE of the live nodes or fewer than GROVE_DECAY_GUARD_FLOOR are live."""
    live = Node.objects.filter(decayed_at__isnull=True).count()
    released = release()
    through = int(released.detail["through_node"]) if released else 0
    freed = garbage <= through
    rest = int((~freed).sum())
    quiet = live < settings.GROVE_DECAY_GUARD_FLOOR
    if quiet or rest <= settings.GROVE_DECAY_GUARD_SHARE * live:
        return garbage, {"live": live, "held_back": 0, "released": int(freed.sum())}
    return garbage[freed], {"live": live, "held_back": rest, "released": int(freed.sum())}
