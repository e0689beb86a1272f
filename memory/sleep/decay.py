"""Decay: a mark-and-sweep from the roots, the owner's keep / let go / restore, and the pending
list (DESIGN.md, "Decay is reachability"). Every clock here is the store clock
(Node.created_at), never the event clock: a note learned today about something years ago is young.

Mark (memory/sleep/reach.py, where the roots, the holding edges and the algorithm are explained):
one BFS from all roots at once over the live holding edges. Sweep: every live node no root
reaches decays with reason `unreachable`, holders before what they hold, in batches of BATCH;
each batch is one UPDATE ... WHERE id IN (...) that re-checks, under the write lock, that the
node is still unread, old and unprotected and that no newer holding edge reaches it, plus its
events through the one audit writer, in one transaction.

This replaces the one-hop gate (age_no_access) and the cascade; their old events keep their
reasons. The owner's let go still decays a held node (owner_let_go); restore brings back the
node and everything it holds that had decayed, and a restore is the owner's keep (a root).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memory import audit
from memory.chunks import chunks
from memory.errors import Conflict, NotFound
from memory.models import CEREMONY_EVENT_KINDS, DecayReason, Event, EventKind, Node
from memory.read import access_fields
from memory.sleep import reach
from memory.sleep.explain import why_rows
from memory.trust import trust_map
from memory.visibility import db_time

PROTECTED_TRUST = reach.PROTECTED_TRUST
BATCH = 5000  # nodes per sweep transaction: few commits, each holding the lock ~0.1 s
ACTOR = "sleep"
HELD_BY_RESTORE = "held_by_restore"
HELD_BY_REVIVED = "held_by_revived"  # the same words arrived again (memory/write.py)
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
    round 4). Bounded by a batch: a few MB. The connection's own setting is put back. SQLite
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
) -> dict:
    """The decay step: mark from the roots, sweep at most `limit` unreachable nodes (holders
    first) in batches of BATCH. Store clock only; `now` defaults to the store clock's now.
    Returns {"count": decayed (or that would be, when dry_run), "candidates", "unreachable"}."""
    now = now or timezone.now()
    since = timezone.now()
    cutoff = now - timedelta(days=_min_age(min_age_days))
    found = reach.mark(cutoff)
    order = reach.holders_first(found.garbage, found.edges)
    if limit is not None:
        order = order[: max(0, limit)]
    result = {"count": 0, "candidates": len(found.candidates), "unreachable": len(found.garbage)}
    if dry_run:
        return {**result, "count": len(order)}
    kept: set[int] = set()  # spared since the mark, and what they hold
    with _sweep_memory():
        for start in range(0, len(order), BATCH):
            batch = [i for i in order[start : start + BATCH] if i not in kept]
            done, spared = _sweep(
                batch, cutoff=cutoff, since=since, edge_mark=found.edge_mark, edges=found.edges
            )
            kept |= spared  # holders come first: what a spared one holds may follow
            result["count"] += len(done)
            if beat:
                beat(**result)
    return result


def _release_days(later: reach.Mark, created: dict[int, datetime], now: datetime, age: float):
    """Days until each node of `later.garbage` is unheld: its own age reaching `age`, and every
    holder released first (a node lives while any holder does). Holders-first order makes one
    pass enough; a holding cycle is approximated by its members' own ages."""
    src, dst = later.edges
    inside = np.isin(src, later.garbage)
    holders: dict[int, list[int]] = {}
    for s, d in zip(src[inside].tolist(), dst[inside].tolist(), strict=True):
        holders.setdefault(d, []).append(s)
    until: dict[int, float] = {}
    for node_id in reach.holders_first(later.garbage, later.edges):
        own = max(0.0, age - (now - created[node_id]).total_seconds() / 86400)
        until[node_id] = max([own, *(until.get(h, 0.0) for h in holders.get(node_id, ()))])
    return until


def _created_at(ids: list[int]) -> dict[int, datetime]:
    created: dict[int, datetime] = {}
    for chunk in chunks(ids):
        created.update(Node.objects.filter(pk__in=chunk).values_list("id", "created_at"))
    return created


def _in_domains(ids: list[int], domains: list[str] | None, limit: int | None) -> list[int]:
    """`ids` (in their order) whose node is in `domains`, the first `limit` of them: read a
    chunk at a time, so a page asking for 50 reads about 50, not every pending node."""
    if domains is None:
        return ids[:limit]
    found: list[int] = []
    for chunk in chunks(ids):
        inside = set(
            Node.objects.filter(pk__in=chunk, domain__in=domains).values_list("id", flat=True)
        )
        found += [i for i in chunk if i in inside]
        if limit is not None and len(found) >= limit:
            return found[:limit]
    return found


def _ranked(
    at_now: reach.Mark,
    later: reach.Mark,
    *,
    now: datetime,
    age: float,
    domains: list[str] | None,
    limit: int | None,
) -> tuple[list[int], list[int], dict[int, float]]:
    """Eligible now (oldest id first) and the rest of `later` by days until eligible, at most
    `limit` in all, with the days of each. The days need every later node's creation time, so
    they are computed only when the eligible-now nodes leave room under `limit`."""
    eligible = _in_domains(at_now.garbage.tolist(), domains, limit)
    if later is at_now or (limit is not None and len(eligible) >= limit):
        return eligible, [], {}
    until = _release_days(later, _created_at(later.garbage.tolist()), now, age)
    soon = later.garbage[~np.isin(later.garbage, at_now.garbage)].tolist()
    soon.sort(key=lambda i: (until[i], i))
    room = None if limit is None else limit - len(eligible)
    return eligible, _in_domains(soon, domains, room), until


def pending_decays(
    *,
    within_days: float = 0,
    domains: Iterable[str] | None = None,
    limit: int | None = None,
    now: datetime | None = None,
) -> list[dict]:
    """What a sweep would collect now, and what it will collect within `within_days` if nobody
    reads, keeps or links anything: derived on each call (two marks from one read of the graph,
    reach.marks), never stored. Store clock.

    Each item: id, kind, domain, excerpt, created_at, age_days, eligible_now,
    days_until_eligible, and why (phrases saying why nothing holds it). Eligible now first
    (oldest id first), then by days until eligible; with `limit`, the `limit` first.
    """
    now = now or timezone.now()
    age = settings.GROVE_DECAY_MIN_AGE_DAYS
    cutoffs = [now - timedelta(days=age)]
    if within_days > 0:
        cutoffs.append(now - timedelta(days=age - within_days))
    found = reach.marks(cutoffs)
    at_now, later = found[0], found[-1]
    chosen = None if domains is None else list(domains)
    eligible, soon, until = _ranked(at_now, later, now=now, age=age, domains=chosen, limit=limit)
    # Live only: a node the sweep or the owner decayed since the mark is no longer pending.
    nodes = Node.objects.filter(decayed_at__isnull=True).in_bulk([*eligible, *soon])
    rows: list[dict[str, Any]] = []
    now_ids = set(eligible)
    for node_id in [i for i in [*eligible, *soon] if i in nodes]:
        node, eligible_now = nodes[node_id], node_id in now_ids
        rows.append(
            {
                "id": node_id,
                "kind": node.kind,
                "domain": node.domain,
                "excerpt": node.body[:160],
                "created_at": node.created_at.isoformat(),
                "age_days": round((now - node.created_at).total_seconds() / 86400, 1),
                "eligible_now": eligible_now,
                "days_until_eligible": round(0.0 if eligible_now else until[node_id], 1),
            }
        )
    why = why_rows([int(r["id"]) for r in rows], now_garbage=at_now.garbage)
    for row in rows:
        age_days = float(row["age_days"])
        young = [f"young: {age_days} of {age} days"] if age_days < age else []
        row["why"] = ["not read", f"{age_days:.0f} days old", *young, *why[int(row["id"])]]
    return rows


def pending_count(*, now: datetime | None = None) -> int:
    """How many nodes a sweep would collect now (one mark; nothing else read). Store clock."""
    now = now or timezone.now()
    return len(reach.mark(now - timedelta(days=settings.GROVE_DECAY_MIN_AGE_DAYS)).garbage)


def _node(node_id: int) -> Node:
    node = Node.objects.filter(pk=node_id).first()
    if node is None:
        raise NotFound(f"node {node_id} does not exist")
    return node


def keep(node_id: int, *, actor: str) -> Node:
    """The owner keeps a node: an explicit act with its kept event, which makes the node a root;
    it also counts as a read (access_count +1, read_days on a new day, last_accessed_at = now,
    store clock). Refuses (Conflict) a decayed node: restore it first."""
    with transaction.atomic():
        node = _node(node_id)
        if node.decayed_at is not None:
            raise Conflict(f"node {node_id} has decayed; restore it to keep it", code="decayed")
        Node.objects.filter(pk=node_id).update(**access_fields(timezone.now(), actor))
        audit.record(EventKind.KEPT, node=node_id, actor=actor, reason="owner_keep")
    node.refresh_from_db()
    return node


def let_go(node_id: int, *, actor: str) -> Node:
    """The owner lets a node go now, held or not: decayed, reason owner_let_go. Refuses
    (Conflict) a node that is already decayed, permanent, or ground, proposed or sealed."""
    with transaction.atomic():
        node = _node(node_id)
        if node.decayed_at is not None:
            raise Conflict(f"node {node_id} has already decayed", code="already_decayed")
        if node.permanent:
            raise Conflict(
                f"node {node_id} is permanent: reads made it so, and that never reverts",
                code="permanent",
            )
        trust = trust_map([node_id])[node_id]
        if trust in PROTECTED_TRUST:
            raise Conflict(
                f"node {node_id} is {trust}; a {trust} node is never let go", code=f"is_{trust}"
            )
        Node.objects.filter(pk=node_id).update(decayed_at=timezone.now())
        audit.record(EventKind.DECAYED, node=node_id, actor=actor, reason=DecayReason.OWNER_LET_GO)
    node.refresh_from_db()
    return node


def _held_decayed(node_id: int, *, cap: int = 5000) -> list[int]:
    """Decayed nodes that `node_id` holds, transitively through holding edges (its provenance
    chain), except those the owner let go or consolidation merged: those stay decisions."""
    seen, frontier, found = {node_id}, [node_id], []
    while frontier and len(seen) < cap:
        marks = ",".join(["%s"] * len(frontier))
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT DISTINCT e.to_node_id, n.decayed_at IS NOT NULL FROM memory_edge e
                    JOIN memory_node n ON n.id = e.to_node_id
                    WHERE e.from_node_id IN ({marks}) AND e.kind IN ({reach.HOLDING_SQL})""",
                frontier,
            )
            rows = [(i, bool(d)) for i, d in cursor.fetchall() if i not in seen]
        seen.update(i for i, _ in rows)
        frontier = [i for i, _ in rows]
        found += [i for i, decayed in rows if decayed]
    last: dict[int, str] = {}
    for nid, why in (
        Event.objects.filter(node_id__in=found, kind=EventKind.DECAYED)
        .order_by("id")
        .values_list("node_id", "reason")
    ):
        last[nid] = why
    decisions = {DecayReason.OWNER_LET_GO, DecayReason.CONSOLIDATED}
    return sorted(i for i in found if last.get(i) not in decisions)


def restore(node_id: int, *, actor: str) -> Node:
    """Bring a decayed node back to live (restored, reason owner_restore: the owner's keep, so it
    is a root from now on), and with it every decayed node it holds (restored, reason
    held_by_restore, related to it), in one transaction. Refuses (Conflict) a live node. Access
    counts are untouched: restoring is not reading."""
    with transaction.atomic():
        node = _node(node_id)
        if node.decayed_at is None:
            raise Conflict(f"node {node_id} is live; there is nothing to restore", code="live")
        Node.objects.filter(pk=node_id).update(decayed_at=None)
        audit.record(EventKind.RESTORED, node=node_id, actor=actor, reason=reach.OWNER_RESTORE)
        restore_held(node_id, actor=actor, reason=HELD_BY_RESTORE)
    node.refresh_from_db()
    return node


def restore_held(node_id: int, *, actor: str, reason: str) -> list[int]:
    """Bring back every decayed node that `node_id` holds (_held_decayed), each with a restored
    event related to it; the caller brings back `node_id` itself (a restore, or a revival in
    memory/write.py). Inside the caller's transaction."""
    chain = _held_decayed(node_id)
    Node.objects.filter(pk__in=chain).update(decayed_at=None)
    audit.record_many(
        EventKind.RESTORED, chain, actor=actor, reason=reason, related=dict.fromkeys(chain, node_id)
    )
    return chain
