"""Cross-link: similar edges from each new node to its nearest older live nodes (DESIGN.md, Sleep).

Which nodes are new: those with an id above the high-water mark the last cross-link recorded
(SleepRun.steps["crosslink"]["through_id"], per embedding model). Ids only grow, so a node an
importer back-dates on the store clock is still seen; a re-run after a crash redoes at most one
block, harmless because edges that exist are filtered out first (the database refuses a second
(from, to, kind) edge outright, INSERT OR IGNORE included: migration 0005).

Direction: always newer -> older (to_node_id < from_node_id). A pair is therefore linked at most
once, never a->b and b->a, and an incremental run only multiplies the new rows by the old ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from threadpoolctl import threadpool_limits

from memory.models import Edge, EdgeKind, Event, EventKind, Node
from memory.sleep.crossjoin import join
from memory.trust import WORDLESS, trust_map
from memory.vectors.embed import cosine_floor, get_embedder
from memory.vectors.index import VectorIndex, sync_index

# The cosine at or above which two nodes are "similar" is the embedder's (embed.cosine_floor):
# with the hashing embedder, on LoCoMo's real turns unrelated pairs sit near 0.09 and a turn's
# nearest neighbour near 0.41, and 0.6 links near paraphrases only.
CAP = settings.GROVE_CROSSLINK_CAP
BLOCK = 512  # rows per matrix product: 512 x 100k float32 is 200 MB
SLACK = 8  # candidates per node beyond the cap, for pairs already linked
LINK_BLOCK = 4096  # new nodes per commit on the indexed path (no product is held per block)
ACTOR = "sleep"


@dataclass
class LiveVectors:
    """Live nodes' vectors of one model, ordered by node id."""

    model: str
    ids: np.ndarray
    domains: np.ndarray
    matrix: np.ndarray


def load_live_vectors(*, model: str | None = None, exclude_hidden: bool = True) -> LiveVectors:
    """Every live node's vector for `model` (default: the current embedder), skipping rows whose
    blob does not match their dim (the integrity check reports those) and, by default, sealed
    or rejected nodes, which nothing may link to."""
    embedder = get_embedder()
    model = model or embedder.name
    # Raw: the vector matrix load, every blob straight off the cursor (no per-row converters).
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT v.node_id, n.domain, v.dim, v.data FROM memory_vector v
               JOIN memory_node n ON n.id = v.node_id
               WHERE v.model = %s AND n.decayed_at IS NULL ORDER BY v.node_id""",
            [model],
        )
        rows = cursor.fetchall()
    dim = embedder.dim if model == embedder.name else (rows[0][2] if rows else 1)
    rows = [r for r in rows if r[2] == dim and len(r[3]) == dim * 4]
    hidden = hidden_ids() if exclude_hidden else set()
    if hidden:
        rows = [r for r in rows if r[0] not in hidden]
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    names = sorted({r[1] for r in rows})
    code = {name: i for i, name in enumerate(names)}
    domains = np.fromiter((code[r[1]] for r in rows), dtype=np.int32, count=len(rows))
    matrix = np.frombuffer(b"".join(bytes(r[3]) for r in rows), dtype="<f4").reshape(-1, dim)
    return LiveVectors(model, ids, domains, matrix)


def hidden_ids() -> set[int]:
    """Nodes whose derived trust is sealed or rejected (a small set: those with such events)."""
    ids = set(
        Event.objects.filter(kind__in=[EventKind.SEALED, EventKind.REJECTED]).values_list(
            "node_id", flat=True
        )
    )
    ids.discard(None)
    return {i for i, t in trust_map(ids).items() if t in WORDLESS}


def crosslink(
    *,
    after_id: int = 0,
    limit: int | None = None,
    dry_run: bool = False,
    beat: Callable[..., None] | None = None,
    min_cosine: float | None = None,
    cap: int = CAP,
) -> dict[str, Any]:
    """Link each live node with id > after_id (at most `limit` of them) to its `cap` nearest
    older live nodes in the same domain with cosine >= min_cosine (the embedder's crosslink
    cosine when None). Reads no clock (ids order).

    Never links sealed or rejected nodes, never exceeds `cap` similar out-edges per node (edges
    already there count), never adds b->a when a->b is similar. Each block commits on its own.
    Returns {"count": edges added (or that would be), "nodes": processed, "through_id": mark}.
    From GROVE_ANN_MIN_ROWS vectors on, candidates come from the vector index (kept up to date
    here first) instead of a product with every older vector.
    """
    embedder = get_embedder()
    if min_cosine is None:
        min_cosine = cosine_floor("crosslink")
    index = sync_index(model=embedder.name, dim=embedder.dim)
    if index is not None:
        return _crosslink_indexed(
            index,
            after_id=after_id,
            limit=limit,
            dry_run=dry_run,
            beat=beat,
            min_cosine=min_cosine,
            cap=cap,
        )
    vectors = load_live_vectors()
    new_rows = np.nonzero(vectors.ids > after_id)[0]
    # Stop before the first live node still lacking a vector, so the mark never skips it.
    first_unembedded = _first_live_without_vector(after_id=after_id, model=vectors.model)
    if first_unembedded is not None:
        new_rows = new_rows[vectors.ids[new_rows] < first_unembedded]
    if limit is not None:
        new_rows = new_rows[:limit]
    return _link_blocks(
        vectors,
        new_rows,
        lambda rows: _nearest_older(vectors, rows, min_cosine=min_cosine, cap=cap),
        after_id=after_id,
        dry_run=dry_run,
        beat=beat,
        min_cosine=min_cosine,
        cap=cap,
    )


def _link_blocks(
    view: LiveVectors,
    new_rows: np.ndarray,
    pairs_for: Callable[[np.ndarray], dict[int, list[tuple[float, int]]]],
    *,
    block: int = 0,
    after_id: int,
    dry_run: bool,
    beat: Callable[..., None] | None,
    min_cosine: float,
    cap: int,
) -> dict[str, Any]:
    """Link `new_rows` block by block (each block commits on its own), with the candidates
    `pairs_for(rows)` finds: the one loop of both paths (exact product and vector index)."""
    added = 0
    through = after_id
    block = block or BLOCK
    for start in range(0, len(new_rows), block):
        rows = new_rows[start : start + block]
        added += _link_block(view, rows, pairs_for(rows), cap=cap, dry_run=dry_run)
        through = int(view.ids[rows[-1]])
        if beat:
            beat(count=added, nodes=start + len(rows), through_id=through)
    return {
        "count": added,
        "nodes": len(new_rows),
        "through_id": through,
        "model": view.model,
        "min_cosine": min_cosine,
        "cap": cap,
    }


def _crosslink_indexed(
    index: VectorIndex,
    *,
    after_id: int,
    limit: int | None,
    dry_run: bool,
    beat: Callable[..., None] | None,
    min_cosine: float,
    cap: int,
) -> dict[str, Any]:
    """crosslink() over the vector index: the same rules, candidates from the IVF join."""
    # A boolean array by node id: one lookup per row where np.isin would sort both sides.
    top = int(index.ids.max()) + 1 if index.rows else 1
    excluded = np.zeros(top, dtype=bool)
    hidden = np.fromiter(hidden_ids(), dtype=np.int64)
    for ids in (_decayed_ids(), hidden):
        excluded[ids[ids < top]] = True
    usable = ~excluded[index.ids]
    new_rows = np.nonzero(usable & (index.ids > after_id))[0]
    new_rows = new_rows[np.argsort(index.ids[new_rows], kind="stable")]
    first_unembedded = _first_live_without_vector(after_id=after_id, model=index.model)
    if first_unembedded is not None:
        new_rows = new_rows[index.ids[new_rows] < first_unembedded]
    if limit is not None:
        new_rows = new_rows[:limit]
    # One BLAS thread: the join is many small products, and waking worker threads for each
    # cost more than it saved (on a busy machine, spinning threads made it ten times slower).
    with threadpool_limits(limits=1, user_api="blas"):
        best = join(index, new_rows, usable, min_cosine=min_cosine, keep=cap + SLACK)
    position = np.zeros(index.rows, dtype=np.int64)
    position[new_rows] = np.arange(len(new_rows))
    view = LiveVectors(index.model, index.ids, index.domain, np.zeros((0, index.dim)))
    result = _link_blocks(
        view,
        new_rows,
        lambda rows: best.pairs(position[rows], rows),
        block=LINK_BLOCK,
        after_id=after_id,
        dry_run=dry_run,
        beat=beat,
        min_cosine=min_cosine,
        cap=cap,
    )
    return {**result, "index_rows": index.rows}


def _decayed_ids() -> np.ndarray:
    """Decayed node ids, folded by the database into one text that numpy parses: a Python
    tuple per row cost more than the scan (a third of a million rows at 1M nodes)."""
    pg = connection.vendor == "postgresql"
    folded = "string_agg(id::text, ',')" if pg else "group_concat(id)"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {folded} FROM memory_node WHERE decayed_at IS NOT NULL")
        text = cursor.fetchone()[0]
    return np.fromstring(text or "", dtype=np.int64, sep=",")


def _first_live_without_vector(*, after_id: int, model: str) -> int | None:
    missing = Node.objects.filter(pk__gt=after_id, decayed_at__isnull=True).exclude(
        vectors__model=model
    )
    return missing.order_by("id").values_list("id", flat=True).first()


def _nearest_older(
    vectors: LiveVectors, rows: np.ndarray, *, min_cosine: float, cap: int
) -> dict[int, list[tuple[float, int]]]:
    """For each row, the older same-domain rows at or above min_cosine, best first."""
    hi = int(rows[-1])  # rows are sorted by id, so only columns below the last row are older
    if hi == 0:
        return {}
    sims = vectors.matrix[rows] @ vectors.matrix[:hi].T
    # One comparison pass over the block, then only the few hits are looked at.
    r_idx, c_idx = np.nonzero(sims >= min_cosine)
    keep = (c_idx < rows[r_idx]) & (vectors.domains[c_idx] == vectors.domains[rows[r_idx]])
    r_idx, c_idx = r_idx[keep], c_idx[keep]
    values = sims[r_idx, c_idx]
    order = np.lexsort((-values, r_idx))
    # Only each row's best few go on to Python: a dense region can put a thousand older nodes
    # above the threshold, and the cap (plus room for edges already there) needs a handful.
    rank = np.arange(len(order)) - np.searchsorted(r_idx[order], r_idx[order], side="left")
    order = order[rank < cap + SLACK]
    found: dict[int, list[tuple[float, int]]] = {}
    for k in order:
        found.setdefault(int(rows[r_idx[k]]), []).append((float(values[k]), int(c_idx[k])))
    return found


def _link_block(
    vectors: LiveVectors,
    rows: np.ndarray,
    pairs: dict[int, list[tuple[float, int]]],
    *,
    cap: int,
    dry_run: bool,
) -> int:
    if not pairs:
        return 0
    ids = vectors.ids
    sources = [int(ids[r]) for r in pairs]
    existing: dict[int, set[int]] = {}
    # Similar edges already touching these nodes, either direction: they count toward the cap
    # and forbid the reverse edge.
    for start in range(0, len(sources), 450):
        chunk = sources[start : start + 450]
        for a, b in Edge.objects.filter(kind=EdgeKind.SIMILAR, from_node_id__in=chunk).values_list(
            "from_node_id", "to_node_id"
        ):
            existing.setdefault(a, set()).add(b)
        for a, b in Edge.objects.filter(kind=EdgeKind.SIMILAR, to_node_id__in=chunk).values_list(
            "from_node_id", "to_node_id"
        ):
            existing.setdefault(b, set()).add(-a)  # negative: an incoming edge, not an out-edge
    edges = []
    for row, candidates in pairs.items():
        source = int(ids[row])
        linked = existing.get(source, set())
        room = cap - sum(1 for x in linked if x > 0)
        for sim, col in candidates:
            if room <= 0:
                break
            target = int(ids[col])
            if target in linked or -target in linked:
                continue
            edges.append((source, target, round(sim, 6)))
            room -= 1
    if not dry_run and edges:
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        # One prepared INSERT for the block: model instances cost more than the insert itself.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at, "
                "created_by) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [(a, b, EdgeKind.SIMILAR.value, w, now, ACTOR) for a, b, w in edges],
            )
    return len(edges)
