"""Reachability: which live nodes are held, from the roots through the holding edges (DESIGN.md,
"Decay is reachability"). The mark half of decay's mark-and-sweep; memory/sleep/decay.py sweeps.

Roots hold themselves: live nodes that are permanent; whose trust is ground, proposed or sealed;
read at least once (access_count > 0: only agents' reads and the owner's keep count, the
dashboard never reads); kept or restored by the owner (a kept event, or a restored event with
reason owner_restore); younger than the age threshold by the store clock (created_at); or open
questions. Every other live node is a *candidate*: it lives only if a root reaches it.

Holding edges, every one read from -> to (HOLDING): derived_from (child holds origin), cites
(citer holds cited), asks_about (question holds subject), answers / feeds / reopens (hold the
question), nests (container holds part). similar, consolidated_into and responds_to never hold.

The algorithm, chosen for its cost: a path from a root to a candidate can always start at its
last root, so only holding edges *into candidates* matter. One indexed SELECT loads the live
node ids, one loads the holding edges (the edge-kind index), numpy drops the edges that do not
end at a live candidate or start at a decayed node, and scipy.sparse.csgraph.breadth_first_order
runs one BFS from a virtual super-root joined to every root with such an edge: O(nodes + edges),
in C, in one pass however long the chains. A recursive CTE does the same in SQL but re-probes
the edge index once per node per level, and SQLite cannot stop it from revisiting nodes that
two paths reach, so its cost grows with the paths, not the graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import connection
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from memory.models import CEREMONY_EVENT_KINDS, EdgeKind, EventKind, Trust
from memory.trust import trust_map
from memory.visibility import db_time

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
_AUTHORITY = ", ".join(f"'{k.value}'" for k in CEREMONY_EVENT_KINDS)


def _ids(sql: str, params: list | tuple = ()) -> np.ndarray:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return np.fromiter((row[0] for row in cursor.fetchall()), dtype=np.int64)


def candidates(cutoff: datetime) -> np.ndarray:
    """Live nodes that are not roots at `cutoff` (created_at <= cutoff is old enough; store
    clock), sorted. The partial index memory_node_decay_candidates holds exactly the first three
    conditions; the roots by event or by question are few and subtracted afterwards."""
    found = _ids(
        """SELECT id FROM memory_node WHERE decayed_at IS NULL AND permanent = FALSE
           AND access_count = 0 AND created_at <= %s""",
        [db_time(cutoff)],
    )
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
    open_questions = open_question_ids()
    drop = np.concatenate([np.array(protected, dtype=np.int64), owned, open_questions])
    return found[~np.isin(found, drop)]


def open_question_ids() -> np.ndarray:
    """Live open questions: every answer has a reopening at or after it (memory/questions.py's
    rule, in portable SQL)."""
    return _ids(
        """SELECT q.id FROM memory_node q WHERE q.kind = 'question' AND q.decayed_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM memory_edge a WHERE a.to_node_id = q.id
                AND a.kind = 'answers' AND NOT EXISTS (SELECT 1 FROM memory_edge r
                    WHERE r.to_node_id = q.id AND r.kind = 'reopens'
                    AND r.created_at >= a.created_at))"""
    )


def holding_edges() -> tuple[np.ndarray, np.ndarray, int]:
    """Every holding edge as (holder ids, held ids), and the highest edge id seen (the sweep
    spares a node that a newer edge holds)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT from_node_id, to_node_id FROM memory_edge WHERE kind IN ({HOLDING_SQL})"
        )
        rows = np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, 2)
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM memory_edge")
        top = cursor.fetchone()[0]
    return rows[:, 0], rows[:, 1], top


@dataclass(frozen=True)
class Mark:
    """One mark at a cutoff: the candidates, those a root reaches, and the rest (garbage)."""

    candidates: np.ndarray
    garbage: np.ndarray
    edges: tuple[np.ndarray, np.ndarray]  # live holding edges into candidates
    edge_mark: int


def mark(cutoff: datetime) -> Mark:
    """Mark from all roots at once (see the module docstring); a node is garbage when it is a
    candidate at `cutoff` and no root reaches it. Store clock only."""
    cands = candidates(cutoff)
    src, dst, top = holding_edges()
    if not len(cands):
        empty = np.empty(0, dtype=np.int64)
        return Mark(cands, cands, (empty, empty), top)
    live = _ids("SELECT id FROM memory_node WHERE decayed_at IS NULL")
    keep = np.isin(dst, cands) & np.isin(src, live)
    src, dst = src[keep], dst[keep]
    roots = np.unique(src[~np.isin(src, cands)])
    size = int(max(cands.max(), src.max() if len(src) else 0)) + 2
    start = size - 1  # the virtual super-root
    rows = np.concatenate([src, np.full(len(roots), start, dtype=np.int64)])
    cols = np.concatenate([dst, roots])
    graph = csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(size, size))
    reached = breadth_first_order(graph, start, directed=True, return_predecessors=False)
    return Mark(cands, cands[~np.isin(cands, reached)], (src, dst), top)


def holders_first(garbage: np.ndarray, edges: tuple[np.ndarray, np.ndarray]) -> list[int]:
    """The garbage ordered so that a node comes after every garbage node holding it (levels of
    Kahn's algorithm, one numpy pass per level). A sweep cut short by its work cap then leaves
    live only nodes whose holders are gone, never a live holder of a decayed node. Nodes on a
    holding cycle (rare: derived_from cannot cycle) come last, oldest id first."""
    src, dst = edges
    inside = np.isin(src, garbage) & np.isin(dst, garbage)
    src, dst = src[inside], dst[inside]
    left = np.sort(garbage)
    order: list[int] = []
    while len(left):
        held = np.isin(left, dst)
        level = left[~held]
        if not len(level):
            order += left.tolist()
            break
        order += level.tolist()
        gone = np.isin(src, level)
        src, dst = src[~gone], dst[~gone]
        left = left[held]
    return order
