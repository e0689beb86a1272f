"""Cross-link's candidate join over the vector index (memory.vectors.index): for each new row, the
best few older same-domain usable rows at or above the threshold among the members of its
CROSSLINK_PROBES nearest IVF clusters (cosines of the float16 vectors).

Per cluster, its members and the new rows probing it are both sorted by (domain, node id), so
each domain's probers meet only that domain's members, and a block of probers (in id order)
only the members older than its newest prober: a pair is always newer -> older and within one
domain, and the products outside those never made an edge. Each new row keeps a running best
`keep` (a fixed array, whatever the density of the region), folded in as candidates accumulate.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings

from memory.vectors.index import CROSSLINK_PROBES, VectorIndex

if TYPE_CHECKING:
    import numpy.typing as npt

ASK_BLOCK = 1024  # probers per product
# New rows per nearest-cluster search: its temporaries are ~32 bytes per row and cluster (130 MB
# at 4,096 rows and 2,000 clusters), and each thread holds its own.
PROBE_BLOCK = 1024
FOLD_AT = 2_000_000  # candidate pairs held before they are folded into the running best
FOLD_SLICE = 250_000  # pairs merged at once with their rows' best so far
RELEASE_EVERY = 64  # clusters between unmapping the float16 pages read (RSS, not the cache)


@dataclass
class Best:
    """Per new row (by position), its best candidates so far, best first: cosine and index row
    (-inf and -1 where there are fewer)."""

    values: npt.NDArray[np.float32]  # (n, keep)
    cols: npt.NDArray[np.int32]  # (n, keep)

    @classmethod
    def empty(cls, n: int, keep: int) -> Best:
        return cls(np.full((n, keep), -np.inf, np.float32), np.full((n, keep), -1, np.int32))

    def fold(self, pos: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        """Fold in candidate pairs (position, index row, cosine): each position keeps its best
        `keep`, the higher cosine first; among equal cosines what was there first stays first.
        A slice of positions at a time, so the merge never holds every row's best at once."""
        if len(pos) == 0:
            return
        order = np.argsort(pos, kind="stable")
        pos, cols, values = pos[order], cols[order], values[order]
        start = 0
        while start < len(pos):
            # A slice ends where its last position's pairs end: each position folds once.
            end = int(np.searchsorted(pos, pos[min(start + FOLD_SLICE, len(pos)) - 1], "right"))
            self._fold_sorted(pos[start:end], cols[start:end], values[start:end])
            start = end

    def _fold_sorted(self, pos: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        keep = self.values.shape[1]
        touched, inverse = np.unique(pos, return_inverse=True)
        at = np.concatenate([np.repeat(np.arange(len(touched)), keep), inverse])
        vals = np.concatenate([self.values[touched].ravel(), values.astype(np.float32)])
        cs = np.concatenate([self.cols[touched].ravel(), cols.astype(np.int32)])
        order = np.lexsort((-vals, at))  # stable: by position, then best first
        at, vals, cs = at[order], vals[order], cs[order]
        rank = np.arange(len(at)) - np.searchsorted(at, at)
        kept = rank < keep
        new_values = np.full((len(touched), keep), -np.inf, np.float32)
        new_cols = np.full((len(touched), keep), -1, np.int32)
        new_values[at[kept], rank[kept]] = vals[kept]
        new_cols[at[kept], rank[kept]] = cs[kept]
        self.values[touched], self.cols[touched] = new_values, new_cols

    def pairs(self, positions: np.ndarray, rows: np.ndarray) -> dict[int, list[tuple[float, int]]]:
        """{index row: [(cosine, index row), ...] best first} for the new rows at `positions`."""
        values, cols = self.values[positions], self.cols[positions]
        found: dict[int, list[tuple[float, int]]] = {}
        for i in np.nonzero(cols[:, 0] >= 0)[0]:
            found[int(rows[i])] = [
                (float(v), int(c)) for v, c in zip(values[i], cols[i], strict=True) if c >= 0
            ]
        return found


def _f32(index: VectorIndex, rows: np.ndarray) -> np.ndarray:
    return np.asarray(index.vectors[rows], dtype=np.float32)


def join(
    index: VectorIndex, new_rows: np.ndarray, usable: np.ndarray, *, min_cosine: float, keep: int
) -> Best:
    """Each new row's best `keep` older same-domain usable rows at or above min_cosine, among
    the members of its nearest clusters. `new_rows` are index rows; the result is by position
    in `new_rows`."""
    best = Best.empty(len(new_rows), keep)
    if len(new_rows) == 0:
        return best
    ids, domain = index.ids, index.domain
    nlist = len(index.centroids)
    probes = _probes(index, new_rows)
    members = np.nonzero(usable)[0]
    members = members[np.lexsort((ids[members], domain[members], index.cluster[members]))]
    member_bounds = np.searchsorted(index.cluster[members], np.arange(nlist + 1))
    # int32: at a million rows these arrays are a dozen entries per new row.
    asking = np.repeat(np.arange(len(new_rows), dtype=np.int32), probes.shape[1])
    probed = probes.ravel().astype(np.int32)
    del probes
    asked = new_rows[asking]
    order = np.lexsort((ids[asked], domain[asked], probed))
    del asked
    asking, probed = asking[order], probed[order]
    ask_bounds = np.searchsorted(probed, np.arange(nlist + 1))
    del probed, order

    def pairs_of(c: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        targets = members[member_bounds[c] : member_bounds[c + 1]]
        if len(targets) == 0:
            return []
        asks = asking[ask_bounds[c] : ask_bounds[c + 1]]
        return _cluster_pairs(index, new_rows, asks, targets, min_cosine=min_cosine, keep=keep)

    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    pending = 0
    clusters = np.nonzero(np.diff(ask_bounds))[0].tolist()
    with _threads() as pool:
        for start in range(0, len(clusters), RELEASE_EVERY):
            # In cluster order whatever thread ran it: the fold keeps the first of equal cosines.
            for parts in pool.map(pairs_of, clusters[start : start + RELEASE_EVERY]):
                found.extend(parts)
                pending += sum(len(part[0]) for part in parts)
                if pending > FOLD_AT:
                    best.fold(*(np.concatenate(x) for x in zip(*found, strict=True)))
                    found, pending = [], 0
            index.release()  # the join reads every row once; keep resident only a window
    if found:
        best.fold(*(np.concatenate(x) for x in zip(*found, strict=True)))
    return best


def _threads() -> ThreadPoolExecutor:
    """The join's workers. The products, comparisons and sorts they run release the GIL, so they
    share the cores; each thread's BLAS calls stay single-threaded (the caller's limit)."""
    return ThreadPoolExecutor(max(1, settings.GROVE_SLEEP_THREADS))


def _probes(index: VectorIndex, new_rows: np.ndarray) -> np.ndarray:
    """(len(new_rows), CROSSLINK_PROBES) nearest clusters of each new row, PROBE_BLOCK at a time."""
    with _threads() as pool:
        blocks = pool.map(
            lambda s: index.nearest_clusters(
                _f32(index, new_rows[s : s + PROBE_BLOCK]), CROSSLINK_PROBES
            ),
            range(0, len(new_rows), PROBE_BLOCK),
        )
        return np.concatenate(list(blocks))


def _cluster_pairs(
    index: VectorIndex,
    new_rows: np.ndarray,
    asking: np.ndarray,
    targets: np.ndarray,
    *,
    min_cosine: float,
    keep: int,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(position, index row, cosine) of the pairs above the threshold between the probers at
    positions `asking` and one cluster's `targets`, both sorted by (domain, id)."""
    ids, domain = index.ids, index.domain
    target_ids, target_domains = ids[targets], domain[targets]
    ask_domains = domain[new_rows[asking]]
    parts = []
    for d in np.unique(ask_domains):
        t0, t1 = np.searchsorted(target_domains, [d, d + 1])
        a0, a1 = np.searchsorted(ask_domains, [d, d + 1])
        # Only this domain's members older than its newest prober are read: reading the float16
        # rows is most of an incremental join (at 1M, 1,000 new rows probe most clusters).
        top = t0 + int(np.searchsorted(target_ids[t0:t1], ids[new_rows[asking[a1 - 1]]]))
        if top == t0:
            continue
        target_vectors = _f32(index, targets[t0:top])
        for s in range(a0, a1, ASK_BLOCK):
            block = asking[s : min(s + ASK_BLOCK, a1)]
            rows = new_rows[block]
            row_ids = ids[rows]
            # Only members older than the block's newest prober can pair with any of it.
            hi = t0 + int(np.searchsorted(target_ids[t0:t1], row_ids[-1]))
            if hi == t0:
                continue
            sims = _f32(index, rows) @ target_vectors[: hi - t0].T
            r_idx, c_idx = np.nonzero(sims >= min_cosine)
            older = target_ids[t0 + c_idx] < row_ids[r_idx]
            r_idx, c_idx = r_idx[older], c_idx[older]
            if len(r_idx) > len(block) * keep:
                r_idx, c_idx = _best_in_block(sims, r_idx, c_idx, keep)
            parts.append((block[r_idx], targets[t0 + c_idx], sims[r_idx, c_idx]))
    return parts


def _best_in_block(
    sims: np.ndarray, r_idx: np.ndarray, c_idx: np.ndarray, keep: int
) -> tuple[np.ndarray, np.ndarray]:
    """A dense block (a region of near-identical short texts puts hundreds of millions of
    pairs above the threshold): only each row's best `keep` of the block can be among its
    best overall, so only those are kept (which of equal cosines at the cut is arbitrary)."""
    masked = np.full(sims.shape, -np.inf, dtype=np.float32)
    masked[r_idx, c_idx] = sims[r_idx, c_idx]
    top = np.argpartition(-masked, keep - 1, axis=1)[:, :keep]
    rows, k = np.nonzero(np.take_along_axis(masked, top, axis=1) > -np.inf)
    return rows, top[rows, k]
