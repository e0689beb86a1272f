"""The running best of cross-link's indexed join (memory/sleep/crossjoin.py)."""

from __future__ import annotations

import numpy as np

from memory.sleep import crossjoin
from memory.sleep.crossjoin import Best


def brute_best(pos, cols, values, n, keep):
    """Each position's `keep` best (cosine, column), higher first, ties in arrival order."""
    found = {}
    for p, c, v in zip(pos, cols, values, strict=True):
        found.setdefault(int(p), []).append((float(np.float32(v)), int(c)))
    return {p: sorted(vs, key=lambda x: -x[0])[:keep] for p, vs in found.items()}


def test_folding_in_slices_and_batches_keeps_each_rows_best(monkeypatch):
    rng = np.random.default_rng(3)
    n, keep, total = 50, 4, 3000
    pos = rng.integers(0, n, total)
    cols = rng.permutation(10_000)[:total]
    values = rng.choice(np.linspace(0.6, 1.0, 9), total).astype(np.float32)  # many ties
    monkeypatch.setattr(crossjoin, "FOLD_SLICE", 7)  # slices cut through runs of one position
    best = Best.empty(n, keep)
    for start in range(0, total, 1000):  # three folds, as the join's batches arrive
        part = slice(start, start + 1000)
        best.fold(pos[part], cols[part], values[part])
    expected = brute_best(pos, cols, values, n, keep)
    rows = np.arange(n) + 100
    got = best.pairs(np.arange(n), rows)
    assert {int(r) - 100: v for r, v in got.items()} == expected
    assert len(expected) > 0 and all(len(v) == keep for v in expected.values())


def test_rows_without_candidates_have_none():
    best = Best.empty(3, 2)
    best.fold(np.array([1]), np.array([9]), np.array([0.7], dtype=np.float32))
    assert best.pairs(np.arange(3), np.array([10, 11, 12])) == {11: [(np.float32(0.7), 9)]}


def test_a_dense_block_keeps_each_rows_best_few():
    rng = np.random.default_rng(5)
    sims = rng.uniform(0.6, 1.0, size=(6, 40)).astype(np.float32)
    r_idx, c_idx = np.nonzero(sims >= 0.6)
    rows, cols = crossjoin._best_in_block(sims, r_idx, c_idx, 3)
    assert len(rows) == 6 * 3
    for r in range(6):
        kept = sorted(sims[r, cols[rows == r]].tolist(), reverse=True)
        assert kept == sorted(sims[r].tolist(), reverse=True)[:3]


def _themed_index(tmp_path, *, n: int = 600, seed: int = 11, twins: bool = False):
    """An index of `n` float16 vectors around five themes (many pairs pass 0.6), ids 2, 4, ...
    in three domains, each row in its nearest of six clusters; and its rng. With `twins`,
    every seventh row repeats another (equal cosines)."""
    from memory.vectors.search import VectorIndex

    rng = np.random.default_rng(seed)
    dim = 8
    base = rng.standard_normal((5, dim))  # five themes, so many pairs pass the threshold
    vectors = base[rng.integers(0, 5, n)] + 0.35 * rng.standard_normal((n, dim))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float16)
    if twins:
        vectors[1::7] = vectors[::7][: len(vectors[1::7])]
    centroids = base / np.linalg.norm(base, axis=1, keepdims=True)
    centroids = np.vstack([centroids, -centroids[:1]]).astype(np.float32)
    index = VectorIndex(
        path=tmp_path, model="m", dim=dim, last_vector_id=n, trained_rows=n, skipped=0,
        ids=np.arange(1, n + 1, dtype=np.int64) * 2, domain=rng.integers(0, 3, n).astype(np.int32),
        domains=["a", "b", "c"], wild=np.zeros(n, bool), created=np.zeros(n),
        cluster=np.argmax(vectors.astype(np.float32) @ centroids.T, axis=1).astype(np.int32),
        centroids=centroids, vectors=vectors,
    )  # fmt: skip
    return index, rng


def test_the_join_finds_what_a_brute_force_search_finds(monkeypatch, tmp_path):
    """Every cluster probed, so the join must equal the exact search: each new row's best
    older same-domain usable rows at or above the threshold, new rows in several domains."""
    n, nlist, keep = 600, 6, 3
    index, rng = _themed_index(tmp_path, n=n)
    vectors = index.vectors
    usable = rng.random(n) > 0.2
    new_rows = np.nonzero(usable)[0][-150:]  # the newest usable rows, every domain among them
    monkeypatch.setattr(crossjoin, "CROSSLINK_PROBES", nlist)
    monkeypatch.setattr(crossjoin, "ASK_BLOCK", 16)  # blocks cut through each domain's probers
    best = crossjoin.join(index, new_rows, usable, min_cosine=0.6, keep=keep)
    got = best.pairs(np.arange(len(new_rows)), new_rows)
    f32 = vectors.astype(np.float32)
    expected = {}
    for r in new_rows:
        older = np.nonzero(usable & (index.ids < index.ids[r]) & (index.domain == index.domain[r]))
        sims = f32[older[0]] @ f32[r]
        hits = sorted(
            ((float(s), int(c)) for s, c in zip(sims, older[0], strict=True)), key=lambda x: -x[0]
        )
        if hits := [h for h in hits if h[0] >= 0.6][:keep]:
            expected[int(r)] = hits
    assert len(set(index.domain[list(expected)])) == 3 and len(expected) > 100
    assert {r: [c for _, c in v] for r, v in got.items()} == {
        r: [c for _, c in v] for r, v in expected.items()
    }


def test_threads_join_exactly_as_one(monkeypatch, settings, tmp_path):
    """Clusters run on several threads, their pairs folded in cluster order: the same best,
    bit for bit, as one thread: pairs folded as threads finish would reorder equal cosines."""
    index, rng = _themed_index(tmp_path, n=900, seed=4, twins=True)
    index.cluster[1::7] = (index.cluster[::7][: len(index.cluster[1::7])] + 1) % 6  # twins apart
    usable = rng.random(900) > 0.1
    new_rows = np.nonzero(usable)[0][-400:]
    monkeypatch.setattr(crossjoin, "CROSSLINK_PROBES", 6)  # every cluster: each pair is met
    monkeypatch.setattr(crossjoin, "ASK_BLOCK", 16)
    monkeypatch.setattr(crossjoin, "RELEASE_EVERY", 2)  # several windows of clusters
    monkeypatch.setattr(crossjoin, "FOLD_AT", 50)  # folds between clusters
    runs = []
    for threads in (1, 3):
        settings.GROVE_SLEEP_THREADS = threads
        best = crossjoin.join(index, new_rows, usable, min_cosine=0.6, keep=3)
        runs.append((best.values, best.cols))
    (values, cols), (threaded_values, threaded_cols) = runs
    assert (cols >= 0).sum() > 300  # most new rows found partners
    assert np.array_equal(values, threaded_values) and np.array_equal(cols, threaded_cols)
