"""Integrity checks: each returns the violations it finds; an empty list means the check holds.
The custody checks (hashes, arrivals, scrolls, the chain) live in memory/integrity_custody.py,
the vector checks in memory/integrity_vectors.py; CHECKS below assembles them all.

They read raw SQL on purpose: they must see what is in the file, whatever the ORM believes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import DatabaseError, connection

from memory.integrity_custody import (
    body_hash_mismatch,
    chain_anchors,
    hash_chain,
    nodes_disagree_with_arrival,
    scrolls_disagree_with_pairs,
    verdicts_disagree_with_body,
)
from memory.integrity_sql import MAX_EXAMPLES
from memory.integrity_sql import changed_since as _changed
from memory.integrity_sql import rows as _rows
from memory.integrity_vectors import (
    live_nodes_without_vectors,
    vectors_nan_or_zero,
    vectors_of_missing_nodes,
    vectors_of_wrong_dimension,
)


@dataclass
class CheckResult:
    name: str
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def permanent_but_decayed(*, marks: dict[str, int] | None = None) -> list[str]:
    where, params = _changed("n", marks)
    return [
        f"node {node_id} is permanent but decayed"
        for (node_id,) in _rows(
            f"""SELECT id FROM memory_node n WHERE permanent = TRUE AND decayed_at IS NOT NULL
                {where}""",
            params,
        )
    ]


def decayed_without_event() -> list[str]:
    return [
        f"node {node_id} is decayed but has no decayed event"
        for (node_id,) in _rows(
            """SELECT n.id FROM memory_node n WHERE n.decayed_at IS NOT NULL AND NOT EXISTS
               (SELECT 1 FROM memory_event e WHERE e.node_id = n.id AND e.kind = 'decayed')"""
        )
    ]


def lifecycle_flag_disagrees_with_latest_event(*, marks: dict[str, int] | None = None) -> list[str]:
    """The decayed flag must match the latest lifecycle event (decayed vs restored/revived)."""
    where, params = _changed("x", marks)
    rows = _rows(
        f"""
        WITH latest AS (
            SELECT node_id, MAX(id) AS id FROM memory_event x
            WHERE kind IN ('decayed', 'restored', 'revived') {where.replace("x.id", "x.node_id")}
            GROUP BY node_id
        )
        SELECT n.id, e.kind, n.decayed_at IS NOT NULL
        FROM latest l JOIN memory_event e ON e.id = l.id JOIN memory_node n ON n.id = l.node_id
        WHERE (e.kind = 'decayed') != (n.decayed_at IS NOT NULL)
        """,
        params,
    )
    return [
        f"node {node_id} is {'decayed' if decayed else 'live'} but its latest lifecycle event "
        f"is {kind}"
        for node_id, kind, decayed in rows
    ]


def permanent_without_event(*, marks: dict[str, int] | None = None) -> list[str]:
    where, params = _changed("n", marks)
    return [
        f"node {node_id} is permanent but has no promoted_permanent event"
        for (node_id,) in _rows(
            f"""SELECT n.id FROM memory_node n WHERE n.permanent = TRUE {where} AND NOT EXISTS
               (SELECT 1 FROM memory_event e WHERE e.node_id = n.id
                AND e.kind = 'promoted_permanent')""",
            params,
        )
    ]


def edges_touching_missing_nodes(*, after: int = 0) -> list[str]:
    return [
        f"edge {edge_id} ({src} -> {dst}) touches a missing node"
        for edge_id, src, dst in _rows(
            """SELECT e.id, e.from_node_id, e.to_node_id FROM memory_edge e WHERE e.id > %s
               AND (NOT EXISTS (SELECT 1 FROM memory_node n WHERE n.id = e.from_node_id)
                 OR NOT EXISTS (SELECT 1 FROM memory_node n WHERE n.id = e.to_node_id))""",
            (after,),
        )
    ]


def fts_out_of_sync(*, after: int = 0) -> list[str]:
    """Every node has exactly its row in the full-text index, and the index matches the bodies.
    With `after`, only rows above that node id, and without FTS5's whole-index comparison."""
    if connection.vendor == "postgresql":
        return _tsvector_out_of_sync(after=after)
    found = [
        f"node {node_id} has no full-text row"
        for (node_id,) in _rows(
            """SELECT id FROM memory_node WHERE id > %s AND id NOT IN
               (SELECT id FROM memory_node_fts_docsize WHERE id > %s)""",
            (after, after),
        )
    ]
    found += [
        f"full-text row {row_id} has no node"
        for (row_id,) in _rows(
            """SELECT id FROM memory_node_fts_docsize WHERE id > %s AND id NOT IN
               (SELECT id FROM memory_node WHERE id > %s)""",
            (after, after),
        )
    ]
    if after:
        return found
    try:
        # FTS5's own check compares the index with the content table, token by token.
        _rows("INSERT INTO memory_node_fts(memory_node_fts, rank) VALUES ('integrity-check', 1)")
    except DatabaseError as exc:
        found.append(f"full-text index disagrees with node bodies: {exc}")
    return found


def _tsvector_out_of_sync(*, after: int = 0) -> list[str]:
    """PostgreSQL's word index is a generated column of the row itself (migration 0013), so it
    cannot drift from the body; what can go wrong is the column or its index missing."""
    found = [
        f"node {node_id} has no tsvector"
        for (node_id,) in _rows(
            "SELECT id FROM memory_node WHERE id > %s AND body_tsv IS NULL", (after,)
        )
    ]
    if not _rows("SELECT 1 FROM pg_indexes WHERE indexname = 'memory_node_body_tsv'"):
        found.append("the full-text index memory_node_body_tsv is missing")
    return found


def run_checks(
    names: list[str] | None = None,
    *,
    full_chain: bool | None = False,
    since: dict[str, int] | None = None,
) -> list[CheckResult]:
    """Run the named checks (all by default); each result lists up to MAX_EXAMPLES violations
    plus a count line when there are more. The hash chain is verified from its last checkpoint,
    from the start when `full_chain`, or when a weekly full run is due with full_chain=None.
    With `since` (marks: the highest node, vector and edge ids already verified), the checks
    in SCOPED look only at rows above their mark (memory/integrity_since.py)."""
    results = []
    for name, check in CHECKS.items():
        if names and name not in names:
            continue
        if check is hash_chain:
            violations = hash_chain(full=full_chain)
        elif since and SCOPED.get(name) == "marks":
            violations = check(marks=since)  # type: ignore[call-arg]
        elif since and name in SCOPED:
            violations = check(after=since.get(SCOPED[name], 0))  # type: ignore[call-arg]
        else:
            violations = check()
        if len(violations) > MAX_EXAMPLES:
            extra = len(violations) - MAX_EXAMPLES
            violations = [*violations[:MAX_EXAMPLES], f"... and {extra} more"]
        results.append(CheckResult(name, violations))
    return results


# --- sleep's checks (issue 4) -------------------------------------------------------------------


def ground_or_proposed_decayed(*, marks: dict[str, int] | None = None) -> list[str]:
    from memory.models import CEREMONY_EVENT_KINDS
    from memory.trust import trust_map

    kinds = ",".join(f"'{k.value}'" for k in CEREMONY_EVENT_KINDS)
    where, params = _changed("n", marks)
    ids = [
        node_id
        for (node_id,) in _rows(
            f"""SELECT n.id FROM memory_node n WHERE n.decayed_at IS NOT NULL {where} AND EXISTS
                (SELECT 1 FROM memory_event e WHERE e.node_id = n.id AND e.kind IN ({kinds}))""",
            params,
        )
    ]
    return [
        f"node {node_id} is {trust} but decayed"
        for node_id, trust in trust_map(ids).items()
        if trust in ("ground", "proposed")
    ]


def similar_edges_duplicated(*, after: int = 0) -> list[str]:
    """A pair is similar once: a->b and b->a both similar is a duplicate (the later of the two
    with an id above `after`)."""
    return [
        f"similar edges {a_id} ({a} -> {b}) and {b_id} ({b} -> {a}) duplicate one pair"
        for a_id, a, b, b_id in _rows(
            """SELECT x.id, x.from_node_id, x.to_node_id, y.id FROM memory_edge y
               JOIN memory_edge x ON x.from_node_id = y.to_node_id
                AND x.to_node_id = y.from_node_id AND x.kind = 'similar'
               WHERE y.kind = 'similar' AND y.id > %s AND x.id < y.id""",
            (after,),
        )
    ]


def nests_not_verbatim(*, after: int = 0) -> list[str]:
    """Every nests edge (container -> part; with an id above `after`) has a part whose body is
    the container's body at the span the part records (metadata.extract), word for word."""
    found = []
    for edge_id, outer_id, inner_id, outer, inner, meta in _rows(
        """SELECT e.id, e.from_node_id, e.to_node_id, p.body, c.body, c.metadata
           FROM memory_edge e JOIN memory_node p ON p.id = e.from_node_id
           JOIN memory_node c ON c.id = e.to_node_id WHERE e.kind = 'nests' AND e.id > %s""",
        (after,),
    ):
        span = (meta if isinstance(meta, dict) else json.loads(meta or "{}")).get("extract") or {}
        start, end = span.get("start"), span.get("end")
        verbatim = (
            span.get("parent") == outer_id
            and isinstance(start, int)
            and isinstance(end, int)
            and outer[start:end] == inner
        )
        if not verbatim:
            found.append(f"nests edge {edge_id}: node {inner_id} is not verbatim in {outer_id}")
    return found


# Decay is reachability (memory/sleep/reach.py): the sweep never leaves a live holder of a
# decayed node, and never takes a root. The owner's let go and consolidation are decisions.
_LAST_DECAY = """(SELECT ev.reason FROM memory_event ev WHERE ev.node_id = {n}.id
    AND ev.kind = 'decayed' ORDER BY ev.id DESC LIMIT 1)"""


# Above marks, only edges that are new or touch a node with a new event (a decay, a restore, a
# revival, an arrival): an old edge between unchanged nodes held or not as it did when verified.
_EDGES_SINCE = """AND e.id IN (SELECT id FROM memory_edge WHERE id > %s
    UNION SELECT x.id FROM memory_edge x JOIN memory_event t ON t.node_id = x.to_node_id
          WHERE t.id > %s
    UNION SELECT x.id FROM memory_edge x JOIN memory_event t ON t.node_id = x.from_node_id
          WHERE t.id > %s)"""


def live_node_holds_decayed_node(*, marks: dict[str, int] | None = None) -> list[str]:
    from memory.sleep.reach import HOLDING_SQL

    since = (marks["edge"], marks["event"], marks["event"]) if marks else ()
    rows = _rows(
        f"""SELECT e.from_node_id, e.kind, e.to_node_id FROM memory_edge e
            JOIN memory_node a ON a.id = e.from_node_id AND a.decayed_at IS NULL
            JOIN memory_node b ON b.id = e.to_node_id AND b.decayed_at IS NOT NULL
            WHERE e.kind IN ({HOLDING_SQL}) {_EDGES_SINCE if marks else ""}
            AND COALESCE({_LAST_DECAY.format(n="b")}, '') NOT IN ('owner_let_go', 'consolidated')
            ORDER BY e.id LIMIT {MAX_EXAMPLES}""",
        since,
    )
    return [f"live node {a} holds decayed node {b} ({kind})" for a, kind, b in rows]


def root_decayed(*, marks: dict[str, int] | None = None) -> list[str]:
    """A node the sweep decayed (unreachable) that was a root then: read, kept or restored by
    the owner before, young (store clock), or ground/proposed/sealed now. Above marks, only
    nodes with an event above the event mark (their decay, or a ceremony since)."""
    from datetime import UTC, datetime, timedelta

    from django.conf import settings

    from memory.sleep.reach import OWNER_RESTORE, PROTECTED_TRUST
    from memory.trust import trust_map

    rows = _rows(
        f"""SELECT b.id, b.access_count, b.created_at, b.decayed_at, EXISTS (SELECT 1
                FROM memory_event o WHERE o.node_id = b.id AND o.at <= b.decayed_at
                AND (o.kind = 'kept' OR (o.kind = 'restored' AND o.reason = %s))),
                EXISTS (SELECT 1 FROM memory_event c WHERE c.node_id = b.id
                AND c.kind IN ('proposed', 'rooted', 'sealed'))
            FROM memory_node b WHERE b.decayed_at IS NOT NULL
            {"AND b.id IN (SELECT node_id FROM memory_event WHERE id > %s)" if marks else ""}
            AND {_LAST_DECAY.format(n="b")} = 'unreachable'""",
        (OWNER_RESTORE, marks["event"]) if marks else (OWNER_RESTORE,),
    )
    age = timedelta(days=settings.GROVE_DECAY_MIN_AGE_DAYS)

    def when(value) -> datetime:
        value = datetime.fromisoformat(value) if isinstance(value, str) else value
        return value if value.tzinfo else value.replace(tzinfo=UTC)

    bad = {i: "read" for i, reads, *_ in rows if reads}
    bad |= {i: "owned" for i, _, _, _, owned, _ in rows if owned}
    bad |= {i: "young" for i, _, made, gone, *_ in rows if when(gone) - when(made) < age}
    trusts = trust_map([i for i, *_, acts in rows if acts])
    bad |= {i: str(t) for i, t in trusts.items() if t in PROTECTED_TRUST}
    return [f"root node {i} ({why}) was decayed as unreachable" for i, why in sorted(bad.items())]


CHECKS: dict[str, Callable[[], list[str]]] = {
    "permanent_but_decayed": permanent_but_decayed,
    "decayed_without_event": decayed_without_event,
    "lifecycle_flag_disagrees_with_latest_event": lifecycle_flag_disagrees_with_latest_event,
    "permanent_without_event": permanent_without_event,
    "edges_touching_missing_nodes": edges_touching_missing_nodes,
    "fts_out_of_sync": fts_out_of_sync,
    "vectors_of_wrong_dimension": vectors_of_wrong_dimension,
    "vectors_nan_or_zero": vectors_nan_or_zero,
    "vectors_of_missing_nodes": vectors_of_missing_nodes,
    "live_nodes_without_vectors": live_nodes_without_vectors,
    "ground_or_proposed_decayed": ground_or_proposed_decayed,
    "similar_edges_duplicated": similar_edges_duplicated,
    "body_hash_mismatch": body_hash_mismatch,
    "verdicts_disagree_with_body": verdicts_disagree_with_body,
    "nodes_disagree_with_arrival": nodes_disagree_with_arrival,
    "scrolls_disagree_with_pairs": scrolls_disagree_with_pairs,
    "hash_chain": hash_chain,
    "chain_anchors": chain_anchors,
    "nests_not_verbatim": nests_not_verbatim,
    "live_node_holds_decayed_node": live_node_holds_decayed_node,
    "root_decayed": root_decayed,
}

# Checks that read rows one by one, and the id mark each can start above (integrity_since.py).
SCOPED: dict[str, str] = {
    "edges_touching_missing_nodes": "edge",
    "fts_out_of_sync": "node",
    "vectors_of_wrong_dimension": "vector",
    "vectors_nan_or_zero": "vector",
    "vectors_of_missing_nodes": "vector",
    "similar_edges_duplicated": "edge",
    "body_hash_mismatch": "node",
    "nodes_disagree_with_arrival": "node",
    "scrolls_disagree_with_pairs": "node",
    "nests_not_verbatim": "edge",
    "live_node_holds_decayed_node": "marks",
    "root_decayed": "marks",
    "permanent_but_decayed": "marks",
    "lifecycle_flag_disagrees_with_latest_event": "marks",
    "permanent_without_event": "marks",
    "ground_or_proposed_decayed": "marks",
    "live_nodes_without_vectors": "marks",
}
