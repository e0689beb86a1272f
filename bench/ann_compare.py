"""Compare nearest-neighbour libraries on Grove's vectors, to choose the one behind the vector
index (memory/vectors/index.py: faiss); results in docs/bench/ann-compare.md. Not part of
`make bench`: hnswlib and usearch are not Grove's dependencies, so this runs in a scratch
environment:

    uv venv /tmp/ann && VIRTUAL_ENV=/tmp/ann uv pip install numpy faiss-cpu hnswlib usearch
    python bench/ann_compare.py vectors.npy     # float32 (n, dim), unit rows

(vectors.npy: synthetic bodies from bench.synthetic embedded by HashingEmbedder.) Each index is
built single-threaded; 300 rows are queried for their 11 nearest (themselves included) and
compared with the exact answer; "edges" is the share of each query's exact top-3 neighbours at
cosine >= 0.6 (cross-link's rule) that the index returns.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

K = 11


def evaluate(name: str, build: Callable[[], object], search: Callable, data: dict) -> None:
    started = time.perf_counter()
    index = build()
    built = time.perf_counter() - started
    times, hits, edges = [], 0, 0
    for r, q in enumerate(data["queries"]):
        started = time.perf_counter()
        labels = {int(x) for x in search(index, q, K)}
        times.append(time.perf_counter() - started)
        hits += len(labels & set(data["exact"][r]))
        edges += len(labels & data["truth"][r])
    print(
        f"| {name} | {built:.1f} s | {hits / (len(times) * K):.3f} | "
        f"{edges / max(sum(map(len, data['truth'])), 1):.3f} | "
        f"{np.median(times) * 1000:.2f} ms |",
        flush=True,
    )


def main(path: str) -> None:
    import faiss
    import hnswlib
    from usearch.index import Index

    x = np.load(path).astype(np.float32)
    n, d = x.shape
    rng = np.random.default_rng(0)
    chosen = rng.choice(n, 300, replace=False)
    sims = x[chosen] @ x.T
    exact = np.argsort(-sims, axis=1)[:, :K]
    truth = []
    for r, i in enumerate(chosen):
        top = [j for j in exact[r] if j != i][:3]
        truth.append({int(j) for j in top if sims[r, j] >= 0.6})
    data = {"queries": x[chosen], "exact": exact, "truth": truth}
    faiss.omp_set_num_threads(1)
    print("| index | build | R@11 | edges | query p50 |\n|---|---|---|---|---|")

    def hnsw():
        index = hnswlib.Index(space="ip", dim=d)
        index.init_index(max_elements=n, M=16, ef_construction=100)
        index.set_num_threads(1)
        index.add_items(x, np.arange(n))
        index.set_ef(128)
        return index

    evaluate("hnswlib HNSW M16 ef128", hnsw, lambda i, q, k: i.knn_query(q, k=k)[0][0], data)
    for dtype in ("f16", "i8"):

        def usearch(dtype: str = dtype):
            index = Index(ndim=d, metric="cos", dtype=dtype, connectivity=16, expansion_add=100)
            index.add(np.arange(n), x, threads=1)
            index.expansion_search = 128
            return index

        evaluate(f"usearch HNSW {dtype} ef128", usearch, lambda i, q, k: i.search(q, k).keys, data)
    for nprobe in (16, 32):

        def ivf(nprobe: int = nprobe):
            quantizer = faiss.IndexFlatIP(d)
            index = faiss.IndexIVFScalarQuantizer(
                quantizer, d, 256, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
            )
            index.train(x[rng.choice(n, min(n, 256 * 40), replace=False)])
            index.add(x)
            index.nprobe = nprobe
            return index

        def rescored(index, q, k):
            labels = index.search(q[None], 4 * k)[1][0]
            labels = labels[labels >= 0]
            return labels[np.argsort(-(x[labels] @ q))][:k]

        evaluate(f"faiss IVF256 int8 nprobe{nprobe} + rescoring", ivf, rescored, data)


if __name__ == "__main__":
    main(sys.argv[1])
