"""Consolidate near-duplicates: cliques, never chains (DESIGN.md, Sleep).

Candidate pairs are the similar edges cross-link made (weight = cosine) at or above the
embedder's consolidate cosine (embed.cosine_floor); each group is confirmed with exact cosines
on the current model's vectors, and only a clique (every member at or above it with every
other) merges: A~B, B~C, A!~C is no three-way merge.

Who takes part: live claim nodes only. Occurrences (pair, utterance, import) are events, and two
identical turns are two events, so they are never consolidated. Members must share domain (a
scope partitions reads) and each of the four axes (DESIGN.md): jurisdiction (why it is here) and
kind (a home inference is not a home journal) equal, lifecycle live, and trust within what a
merge may touch: sealed, rejected and superseded nodes are left alone. Ground, proposed and
permanent nodes are never losers: with one of them in a clique it is the keeper; with two, they
both stay. Otherwise the keeper is the most-read, then the oldest (store clock), then the lowest id.

Which edges are new: similar edges with an id above the mark of the last consolidation
(SleepRun.steps["consolidate"]["through_edge_id"]).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memory import audit
from memory.models import (
    OCCURRENCE_KINDS,
    DecayReason,
    Edge,
    EdgeKind,
    EventKind,
    Node,
    Trust,
    Vector,
)
from memory.sleep.crosslink import ACTOR
from memory.trust import trust_map
from memory.vectors.embed import cosine_floor, from_blob, get_embedder

MAX_GROUP = 64  # a "duplicate group" bigger than this is a topic, not a duplicate
_PROTECTED_TRUST = frozenset({Trust.GROUND, Trust.PROPOSED})
_UNTOUCHABLE_TRUST = frozenset({Trust.SEALED, Trust.REJECTED, Trust.SUPERSEDED})
# The stored fields members of one clique share: never merged across any of them.
_AXES = ("domain", "jurisdiction", "kind")


def consolidate(
    *,
    after_edge_id: int = 0,
    limit: int | None = None,
    dry_run: bool = False,
    beat: Callable[..., None] | None = None,
    min_cosine: float | None = None,
) -> dict[str, Any]:
    """Merge the cliques reached from similar edges newer than `after_edge_id` (at most `limit`
    losers). Each loser decays (reason consolidated, related_node = keeper) with a
    consolidated_into edge, flag, edge and event in one transaction per clique. Reads the store
    clock only to order keepers (oldest first). Refuses nothing: protected nodes are skipped.
    Returns {"count": losers, "cliques": n, "through_edge_id": mark}.
    """
    if min_cosine is None:
        min_cosine = cosine_floor("consolidate")
    new_edges = list(
        Edge.objects.filter(kind=EdgeKind.SIMILAR, pk__gt=after_edge_id).values_list(
            "id", "from_node_id", "to_node_id", "weight"
        )
    )
    through = max((e[0] for e in new_edges), default=after_edge_id)
    seeds = {n for _, a, b, w in new_edges if w >= min_cosine for n in (a, b)}
    losers_total = 0
    cliques = 0
    done: set[int] = set()
    for seed in sorted(seeds):
        if seed in done:
            continue
        group = _group_around(seed, min_cosine=min_cosine)
        done |= group
        for keeper, losers in _cliques(group, min_cosine=min_cosine):
            if limit is not None and losers_total + len(losers) > limit:
                return _result(losers_total, cliques, after_edge_id, capped=True)
            if not dry_run:
                losers = _merge(keeper, losers)
            losers_total += len(losers)
            cliques += bool(losers)
        if beat:
            beat(count=losers_total, cliques=cliques)
    return _result(losers_total, cliques, through, capped=False)


def _result(count: int, cliques: int, through: int, *, capped: bool) -> dict[str, Any]:
    return {"count": count, "cliques": cliques, "through_edge_id": through, "capped": capped}


def _group_around(seed: int, *, min_cosine: float) -> set[int]:
    """The nodes reachable from seed over strong similar edges between live nodes (bounded)."""
    group, frontier = {seed}, [seed]
    while frontier and len(group) < MAX_GROUP:
        rows = Edge.objects.filter(
            Q(from_node_id__in=frontier) | Q(to_node_id__in=frontier),
            kind=EdgeKind.SIMILAR,
            weight__gte=min_cosine,
            from_node__decayed_at__isnull=True,
            to_node__decayed_at__isnull=True,
        ).values_list("from_node_id", "to_node_id")
        frontier = [n for pair in rows for n in pair if n not in group]
        group.update(frontier[: MAX_GROUP - len(group)])
    return group


def _cliques(group: set[int], *, min_cosine: float) -> list[tuple[int, list[int]]]:
    """Split a group into cliques by exact cosine; return (keeper, unprotected losers) each."""
    nodes: dict[int, dict[str, Any]] = {
        row["id"]: dict(row)
        for row in Node.objects.filter(pk__in=group, decayed_at__isnull=True)
        .exclude(kind__in=OCCURRENCE_KINDS)
        .values("id", *_AXES, "access_count", "created_at", "permanent")
    }
    trust = trust_map(nodes)
    for node_id, row in list(nodes.items()):
        if trust[node_id] in _UNTOUCHABLE_TRUST:
            del nodes[node_id]
        else:
            row["protected"] = row["permanent"] or trust[node_id] in _PROTECTED_TRUST
    vectors = _vectors(list(nodes))
    ids = [i for i in nodes if i in vectors]
    if len(ids) < 2:
        return []
    matrix = np.stack([vectors[i] for i in ids])
    sims = matrix @ matrix.T
    index = {node_id: k for k, node_id in enumerate(ids)}
    # Keeper order: protected first (they cannot lose), then most-read, then oldest.
    remaining = sorted(
        ids,
        key=lambda i: (
            not nodes[i]["protected"],
            -nodes[i]["access_count"],
            nodes[i]["created_at"],
            i,
        ),
    )
    found = []
    while remaining:
        keeper = remaining.pop(0)
        k = nodes[keeper]
        clique = [keeper]
        for other in remaining:
            o = nodes[other]
            if any(o[axis] != k[axis] for axis in _AXES):
                continue
            if all(sims[index[other], index[member]] >= min_cosine for member in clique):
                clique.append(other)
        remaining = [i for i in remaining if i not in clique]
        losers = [i for i in clique[1:] if not nodes[i]["protected"]]
        if losers:
            found.append((keeper, losers))
    return found


def _vectors(node_ids: list[int]) -> dict[int, np.ndarray]:
    embedder = get_embedder()
    return {
        node_id: from_blob(data, dim)
        for node_id, dim, data in Vector.objects.filter(
            node_id__in=node_ids, model=embedder.name, dim=embedder.dim
        ).values_list("node_id", "dim", "data")
        if len(data) == dim * 4
    }


def _merge(keeper: int, losers: list[int]) -> list[int]:
    """Decay the losers into the keeper; re-checked under the write lock (BEGIN IMMEDIATE), so a
    loser read, promoted or decayed meanwhile is skipped. Returns the losers actually merged."""
    now = timezone.now()
    with transaction.atomic():
        if not Node.objects.filter(pk=keeper, decayed_at__isnull=True).exists():
            return []
        marks = ",".join(["%s"] * len(losers))
        # Raw: UPDATE ... RETURNING re-checks and claims the losers in one statement under the
        # write lock; the ORM's update() cannot say which rows it changed.
        with connection.cursor() as cursor:
            cursor.execute(
                f"""UPDATE memory_node SET decayed_at = %s
                    WHERE id IN ({marks}) AND decayed_at IS NULL AND permanent = FALSE
                    AND NOT EXISTS (SELECT 1 FROM memory_event e WHERE e.node_id = memory_node.id
                        AND e.kind IN ('proposed', 'rooted', 'superseded', 'rejected', 'sealed'))
                    RETURNING id""",
                [connection.ops.adapt_datetimefield_value(now), *losers],
            )
            merged = sorted(row[0] for row in cursor.fetchall())
        if not merged:
            return []
        # A loser revived and merged again already has its edge; the database refuses a second
        # one outright (even INSERT OR IGNORE: migration 0005), so skip it here.
        linked = set(
            Edge.objects.filter(
                from_node_id__in=merged, to_node_id=keeper, kind=EdgeKind.CONSOLIDATED_INTO
            ).values_list("from_node_id", flat=True)
        )
        Edge.objects.bulk_create(
            [
                Edge(
                    from_node_id=loser,
                    to_node_id=keeper,
                    kind=EdgeKind.CONSOLIDATED_INTO,
                    created_by=ACTOR,
                )
                for loser in merged
                if loser not in linked
            ]
        )
        audit.record_many(
            EventKind.DECAYED,
            merged,
            actor=ACTOR,
            reason=DecayReason.CONSOLIDATED,
            related=dict.fromkeys(merged, keeper),
            at=now,
        )
    return merged
