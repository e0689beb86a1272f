"""Reachability: which live nodes are held, from the roots through the holding edges (DESIGN.md,
"Decay is reachability"). The mark half of decay's mark-and-sweep (memory/sleep/decay.py
sweeps), and the restore of what a node holds: the rule the write path, restore and the pages
use by day, so it lives outside sleep.

Roots hold themselves: live nodes that are permanent; whose trust is ground, proposed or sealed;
read at least once by an agent (access_count > 0: the dashboard never reads, and Keep is not
a read); kept or restored by the owner (a kept event: the owner pressed Keep, reason owner_keep,
or wrote the words on the dashboard, reason owner_wrote, recorded by memory/write.py in the
write's own transaction and refused with an agent token; or a restored event with reason
owner_restore); younger than the age threshold by the store clock (created_at); or open
questions. Every other live node is a *candidate*: it lives only if a root reaches it.

Holding edges, every one read from -> to (HOLDING): derived_from (child holds origin), cites
(citer holds cited), asks_about (question holds subject), answers / feeds / reopens (hold the
question), nests (container holds part). similar, consolidated_into and responds_to never hold.

The algorithm, chosen for its cost: a path from a root to a candidate can always start at its
last root (every live node that is not a candidate is a root), so only holding edges *into
candidates* matter. One indexed SELECT loads the candidates' ids, one the holding edges into
them (the candidates' index driving the edges' (to_node, kind) index), numpy drops the edges
that start at a decayed node, and scipy.sparse.csgraph.breadth_first_order
runs one BFS from a virtual super-root joined to every root with such an edge: O(nodes + edges),
in C, in one pass however long the chains. A recursive CTE does the same in SQL but re-probes
the edge index once per node per level, and SQLite cannot stop it from revisiting nodes that
two paths reach, so its cost grows with the paths, not the graph. The reads cost more than the
BFS, so marks() reads once for several cutoffs (the pending page's "now" and "within N days"),
and every membership test is a boolean array indexed by node id, not np.isin's sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np
from django.db import connection
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from memory import audit
from memory.models import CEREMONY_EVENT_KINDS, DecayReason, EdgeKind, Event, EventKind, Node, Trust
from memory.trust import trust_map
from memory.visibility import db_time

if TYPE_CHECKING:
    import numpy.typing as npt

    Ids = npt.NDArray[np.int64]  # node or edge ids
    Mask = npt.NDArray[np.bool_]

HOLDING = (
    EdgeKind.DERIVED_FROM,
    EdgeKind.CITES,
    EdgeKind.ASKS_ABOUT,
    EdgeKind.ANSWERS,
    EdgeKind.FEEDS,
    EdgeKind.REOPENS,
    EdgeKind.NESTS,
)
HOLDING_SQL = ", ".join(f"'{k.value}'" for k in HOLDING)
PROTECTED_TRUST = frozenset({Trust.GROUND, Trust.PROPOSED, Trust.SEALED})
OWNER_RESTORE = "owner_restore"
OWNER_KEEP = "owner_keep"  # the owner pressed Keep
OWNER_WROTE = "owner_wrote"  # the owner wrote the words on the dashboard: kept as they arrive
HELD_BY_RESTORE = "held_by_restore"
HELD_BY_REVIVED = "held_by_revived"  # the same words arrived again (memory/write.py)
_PAIR = 1 << 32  # an edge loads as one integer, holder * _PAIR + held, while ids fit
_AUTHORITY = ", ".join(f"'{k.value}'" for k in CEREMONY_EVENT_KINDS)


@dataclass(frozen=True)
class Mark:
    """One mark at a cutoff: the candidates, those a root reaches, and the rest (garbage)."""

    candidates: Ids
    garbage: Ids
    edges: tuple[Ids, Ids]  # live holding edges into candidates
    edge_mark: int


def _rows(sql: str, params: list[Any] | tuple[Any, ...] = (), *, width: int = 1) -> Ids:
    """The query's integer columns as an (n, width) int64 array (booleans read as 0/1)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=len(rows) * width)
    return flat.reshape(-1, width)


def _folded(expr: str, rest: str, params: list[Any] | tuple[Any, ...] = ()) -> Ids:
    """The integer `expr` over the rows of `rest` (FROM ... WHERE ...), folded by the database
    into one comma-separated text that numpy parses in C: a row fetched at a time costs ~0.4 us
    of Python objects, which made these loads 2-4x slower than the scans themselves."""
    if connection.vendor == "postgresql":
        folded = f"string_agg(({expr})::text, ',')"
    else:
        folded = f"group_concat({expr})"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {folded} {rest}", params)
        text = cursor.fetchone()[0]
    return np.fromstring(text or "", dtype=np.int64, sep=",")


def _ids(sql: str, params: list[Any] | tuple[Any, ...] = ()) -> Ids:
    return _rows(sql, params)[:, 0]


def _mask(ids: Ids, size: int) -> Mask:
    """A boolean array indexed by node id, true at `ids`: one lookup per element where np.isin
    would sort both sides on every call."""
    found = np.zeros(size, dtype=bool)
    found[ids] = True
    return found


def _self_held(found: Ids) -> Ids:
    """Of `found` (live, unread, not permanent), the roots by an event or as open questions:
    ground, proposed or sealed; kept or restored by the owner. They are few, so they are read
    apart and subtracted."""
    if not len(found):
        return found
    authority = _ids(f"SELECT DISTINCT node_id FROM memory_event WHERE kind IN ({_AUTHORITY})")
    authority = authority[np.isin(authority, found)]
    trusts = trust_map([int(i) for i in authority])
    protected = [i for i, t in trusts.items() if t in PROTECTED_TRUST]
    owned = _ids(
        """SELECT DISTINCT node_id FROM memory_event WHERE kind = %s
           OR (kind = %s AND reason = %s)""",
        [EventKind.KEPT, EventKind.RESTORED, OWNER_RESTORE],
    )
    return np.concatenate([np.array(protected, dtype=np.int64), owned, open_question_ids()])


def _old_unread_sql(alias: str) -> str:
    """Live, unread, not permanent and created at or before a cutoff (its one parameter): the
    terms of the partial index memory_node_decay_candidates, spelled as it is (see _false)."""
    return (
        f"{alias}.decayed_at IS NULL AND {alias}.permanent = {_false()} "
        f"AND {alias}.access_count = 0 AND {alias}.created_at <= %s"
    )


def _false() -> str:
    """FALSE as the partial index memory_node_decay_candidates spells it: SQLite uses a partial
    index only when the query repeats its terms ("permanent" = 0; FALSE reads as a full scan of
    the created_at index), PostgreSQL proves the implication either way but wants a boolean."""
    return "FALSE" if connection.vendor == "postgresql" else "0"


def _old_unread(cutoffs: Sequence[datetime]) -> tuple[Ids, Mask]:
    """Live unread nodes that are not permanent and old enough at the latest of `cutoffs` (sorted
    ids), and for each cutoff whether the node is old enough at it (one boolean row per cutoff).
    One scan of the partial index memory_node_decay_candidates, which holds exactly these
    conditions and the creation time."""
    # One integer a node: its id, shifted, with one bit a cutoff ("old enough at it").
    bits = " + ".join(
        f"CASE WHEN created_at <= %s THEN {1 << i} ELSE 0 END" for i in range(len(cutoffs))
    )
    packed = _folded(
        f"id * {1 << len(cutoffs)} + {bits}",
        f"FROM memory_node n WHERE {_old_unread_sql('n')}",
        [*(db_time(c) for c in cutoffs), db_time(max(cutoffs))],
    )
    packed.sort()  # the index gives them by age
    old = np.array([(packed >> i) & 1 for i in range(len(cutoffs))], dtype=bool)
    return packed >> len(cutoffs), old.reshape(len(cutoffs), -1)


def marks(cutoffs: Sequence[datetime]) -> list[Mark]:
    """One mark per cutoff (see mark), from one read of the nodes, events and holding edges
    (into the candidates at the latest cutoff): the reads cost far more than a BFS, so a page
    asking "now and within N days" reads once."""
    ids, old = _old_unread(cutoffs)
    spared = _self_held(ids)
    if len(spared):
        kept = ~np.isin(ids, spared)
        ids, old = ids[kept], old[:, kept]
    src, dst, top = holding_edges(max(cutoffs))
    if not len(ids):
        empty = np.empty(0, dtype=np.int64)
        return [Mark(ids, ids, (empty, empty), top) for _ in cutoffs]
    size = int(max(ids.max(), src.max() if len(src) else 0)) + 2
    # Only live holders hold: the decayed are read (a covered index range, like the live, but
    # fewer in all but the most forgetful memories). Only edges into possible garbage matter.
    decayed = _folded("id", "FROM memory_node WHERE decayed_at IS NOT NULL")
    keep = ~_mask(decayed[decayed < size], size)[src] & _mask(ids, size)[dst]
    src, dst = src[keep], dst[keep]
    return [_bfs(ids[at], src, dst, top, size) for at in old]


def _bfs(cands: Ids, src: Ids, dst: Ids, top: int, size: int) -> Mark:
    """One BFS from a virtual super-root joined to every root holding a candidate."""
    is_cand = _mask(cands, size)
    into = is_cand[dst]
    src, dst = src[into], dst[into]
    roots = np.flatnonzero(_mask(src[~is_cand[src]], size))  # sorted, each once
    start = size - 1  # the virtual super-root; ids are below it
    rows = np.concatenate([src, np.full(len(roots), start, dtype=np.int64)])
    cols = np.concatenate([dst, roots])
    # CSR built directly (row pointers from counts): the (row, col) form sorts and checks.
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=size), out=indptr[1:])
    by_row = cols[np.argsort(rows, kind="stable")]
    graph = csr_matrix((np.ones(len(rows), dtype=np.int8), by_row, indptr), shape=(size, size))
    reached = breadth_first_order(graph, start, directed=True, return_predecessors=False)
    return Mark(cands, cands[~_mask(reached, size)[cands]], (src, dst), top)


def fingerprint(cutoffs: Sequence[datetime]) -> tuple[Any, ...]:
    """What marks(cutoffs) would read, in one statement of indexed lookups: equal fingerprints
    give equal marks, so a page may keep a mark while the fingerprint holds.

    Every change to what marks read but one writes an event (decays, restores, revivals, keeps,
    trust, promotion, arrivals), a node or an edge (never updated nor deleted): the last event
    (its id and chain hash, which covers the whole log, so a rolled-back history that reused
    the id differs) and the last node and edge ids say so. The one change without an event, an
    agent's first read, only takes a node out of the candidates: their count at the latest
    cutoff falls. Time adds the nodes that come of age at a cutoff, always newer than every
    candidate already there (and takes them out again if the clock goes back): the newest
    candidate at each cutoff moves. The last node and edge are named by more than their ids, so
    a store written without events (a bench's, a test's) that reused them differs too."""
    cand = _old_unread_sql("n")
    newest = ", ".join(
        f"(SELECT MAX(n.created_at) FROM memory_node n WHERE {cand})" for _ in cutoffs
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT (SELECT MAX(id) FROM memory_event),
                (SELECT chain_hash FROM memory_event ORDER BY id DESC LIMIT 1),
                (SELECT MAX(id) FROM memory_node),
                (SELECT created_at FROM memory_node ORDER BY id DESC LIMIT 1),
                (SELECT MAX(id) FROM memory_edge),
                (SELECT from_node_id FROM memory_edge ORDER BY id DESC LIMIT 1),
                (SELECT to_node_id FROM memory_edge ORDER BY id DESC LIMIT 1),
                (SELECT COUNT(*) FROM memory_node n WHERE {cand}), {newest}""",
            [db_time(max(cutoffs)), *(db_time(c) for c in cutoffs)],
        )
        row: tuple[Any, ...] = cursor.fetchone()
    return (connection.vendor, connection.settings_dict["NAME"], *map(str, row))


def candidates(cutoff: datetime) -> Ids:
    """Live nodes that are not roots at `cutoff` (created_at <= cutoff is old enough; store
    clock), sorted."""
    ids, _old = _old_unread([cutoff])
    spared = _self_held(ids)
    return ids[~np.isin(ids, spared)] if len(spared) else ids


def open_question_ids() -> Ids:
    """Live open questions: every answer has a reopening at or after it (memory/questions.py's
    rule, in portable SQL)."""
    return _ids(
        """SELECT q.id FROM memory_node q WHERE q.kind = 'question' AND q.decayed_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM memory_edge a WHERE a.to_node_id = q.id
                AND a.kind = 'answers' AND NOT EXISTS (SELECT 1 FROM memory_edge r
                    WHERE r.to_node_id = q.id AND r.kind = 'reopens'
                    AND r.created_at >= a.created_at))"""
    )


def holding_edges(cutoff: datetime) -> tuple[Ids, Ids, int]:
    """The holding edges into live unread nodes that are not permanent and old enough at
    `cutoff` (the candidates, and the few self-held among them) as (holder ids, held ids), and
    the highest edge id seen (the sweep spares a node that a newer edge holds).

    Only edges into candidates matter (module docstring), so only they are read: the
    candidates' partial index drives, one seek each into the edges' (to_node, kind) index. After
    the first sleep they are a fifth of the holding edges (1M: 52k candidates, 273k of 1.24M
    edges). CROSS JOIN keeps SQLite's loop on the candidates and `+kind` one seek a candidate,
    not one per holding kind; PostgreSQL plans its own (and has no unary + on text)."""
    # The mark first: an edge the load misses is then newer than it, and the sweep spares what
    # it holds.
    top = int(_ids("SELECT COALESCE(MAX(id), 0) FROM memory_edge")[0])
    pg = connection.vendor == "postgresql"
    rest = f"""FROM memory_node n {"" if pg else "CROSS "}JOIN memory_edge e ON e.to_node_id = n.id
        WHERE {_old_unread_sql("n")} AND {"" if pg else "+"}e.kind IN ({HOLDING_SQL})"""
    params = [db_time(cutoff)]
    if int(_ids("SELECT COALESCE(MAX(id), 0) FROM memory_node")[0]) < _PAIR:
        pairs = _folded(f"e.from_node_id * {_PAIR} + e.to_node_id", rest, params)
        return pairs // _PAIR, pairs % _PAIR, top
    rows = _rows(f"SELECT e.from_node_id, e.to_node_id {rest}", params, width=2)
    return rows[:, 0], rows[:, 1], top


def mark(cutoff: datetime) -> Mark:
    """Mark from all roots at once (see the module docstring); a node is garbage when it is a
    candidate at `cutoff` and no root reaches it. Store clock only."""
    return marks([cutoff])[0]


def holders_first(garbage: Ids, edges: tuple[Ids, Ids]) -> list[int]:
    """The garbage ordered so that a node comes after every garbage node holding it (levels of
    Kahn's algorithm, each level in id order, one numpy pass per level). A sweep cut short by
    its work cap then leaves live only nodes whose holders are gone, never a live holder of a
    decayed node. Nodes on a holding cycle (rare: derived_from cannot cycle) come last, oldest
    id first."""
    if not len(garbage):
        return []
    src, dst = edges
    size = int(max(garbage.max(), src.max() if len(src) else 0)) + 1
    is_garbage = _mask(garbage, size)
    inside = is_garbage[src] & is_garbage[dst]
    src, dst = src[inside], dst[inside]
    holders = np.bincount(dst, minlength=size)  # garbage holders left, per node
    left = np.sort(garbage)
    order: list[Ids] = []
    while len(left):
        free = holders[left] == 0
        level = left[free]
        if not len(level):
            order.append(left)
            break
        order.append(level)
        gone = _mask(level, size)[src]
        holders -= np.bincount(dst[gone], minlength=size)
        src, dst = src[~gone], dst[~gone]
        left = left[~free]
    ordered: list[int] = np.concatenate(order).tolist()
    return ordered


def holdings(spared: set[int], edges: tuple[Ids, Ids]) -> set[int]:
    """`spared` and everything it holds through `edges` (a Mark's holding edges), transitively:
    what the sweep must leave live with a node it spared (memory/sleep/decay.py)."""
    src, dst = edges
    seen = set(spared)
    frontier = np.fromiter(spared, dtype=np.int64, count=len(spared))
    while len(frontier) and len(src):
        reached = np.unique(dst[np.isin(src, frontier)]).tolist()
        fresh = [n for n in reached if n not in seen]
        seen.update(fresh)
        frontier = np.array(fresh, dtype=np.int64)
    return seen


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
                    WHERE e.from_node_id IN ({marks}) AND e.kind IN ({HOLDING_SQL})""",
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


def restore_held(
    node_id: int, *, actor: str, reason: str, detail: dict[str, Any] | None = None
) -> list[int]:
    """Bring back every decayed node that `node_id` holds (_held_decayed), each with a restored
    event related to it (carrying `detail`: a batch's tag); the caller brings back `node_id`
    itself (a restore, or a revival in memory/write.py). Inside the caller's transaction."""
    held = _held_decayed(node_id)
    Node.objects.filter(pk__in=held).update(decayed_at=None)
    audit.record_many(
        EventKind.RESTORED,
        held,
        actor=actor,
        reason=reason,
        related=dict.fromkeys(held, node_id),
        detail=detail,
    )
    return held
