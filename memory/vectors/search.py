"""The vector index in a process: its rows, and the approximate search recall runs over them.

A VectorIndex is what memory.vectors.store loads from (and writes to) the data dir; search builds
faiss's int8 IVF lists from it once per process, filters them by the caller's visibility
bitmap, and rescores the candidates with the memory-mapped float16 vectors. memory.vectors.index
(the public names) says which index a process uses.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import faiss
import numpy as np

from memory.visibility import Visibility

if TYPE_CHECKING:
    import numpy.typing as npt

RECALL_SCAN_SHARE = 1 / 16  # share of the lists a recall probes (bench: R@10 against exact)
RESCORE_FACTOR = 3  # candidates fetched per wanted one, rescored with float16 vectors
EXHAUSTIVE_BELOW = 20_000  # a filter leaving fewer rows scans them all (exact)
CHUNK = 20_000
# Rescoring maps the pages of the rows it reads; they are released after this many rows (at
# most as many 4 KiB pages stay resident, ~80 MB), not after every query: releasing cost each
# recall a madvise over the whole map and a page fault per row read (100k: ~1 ms).
RELEASE_AFTER_ROWS = 20_000


@dataclass
class VectorIndex:
    path: Path
    model: str
    dim: int
    last_vector_id: int
    trained_rows: int
    skipped: int  # vectors up to last_vector_id left out: another dim, or a damaged blob
    ids: npt.NDArray[np.int64]  # node id per row
    domain: npt.NDArray[np.int32]  # code per row, into `domains`
    domains: list[str]
    wild: npt.NDArray[np.bool_]
    created: npt.NDArray[np.float64]  # epoch seconds (store clock)
    cluster: npt.NDArray[np.int32]  # IVF list per row
    centroids: npt.NDArray[np.float32]  # (nlist, dim)
    vectors: npt.NDArray[np.float16]  # (rows, dim), memory-mapped
    _ivf: Any = None
    _ivf_rows: int = 0
    _rescored: int = 0  # rows read for rescoring since the pages were last released

    @property
    def rows(self) -> int:
        return len(self.ids)

    def codes(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.domains)}

    def mask(self, vis: Visibility) -> npt.NDArray[np.bool_] | None:
        return vis.row_mask(
            domain=self.domain, codes=self.codes(), wild=self.wild, created=self.created
        )

    def search(self, query: np.ndarray, vis: Visibility, k: int) -> list[tuple[int, float]]:
        """(node id, cosine) of the k nearest rows the caller may see (domains, scope, as_of),
        best first, scored with the float16 vectors."""
        if self.rows == 0:
            return []
        mask = self.mask(vis)
        passing = self.rows if mask is None else int(mask.sum())
        if passing == 0:
            return []
        ivf = self._faiss()
        faiss.omp_set_num_threads(1)  # one query: threads only add wake-ups
        nlist = len(self.centroids)
        params = faiss.SearchParametersIVF()
        params.nprobe = max(1, int(np.ceil(nlist * RECALL_SCAN_SHARE)))
        if passing < EXHAUSTIVE_BELOW or passing < self.rows * RECALL_SCAN_SHARE:
            params.nprobe = nlist  # a selective filter: scan what passes, all of it
        bitmap = selector = None
        if mask is not None:
            # The bitmap must outlive the search: faiss keeps only a pointer to it.
            bitmap = np.packbits(mask, bitorder="little")
            selector = faiss.IDSelectorBitmap(self.rows, faiss.swig_ptr(bitmap))
            params.sel = selector
        fetch = min(k * RESCORE_FACTOR, passing)
        query = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        _, labels = ivf.search(query, fetch, params=params)
        rows = labels[0][labels[0] >= 0]
        if len(rows) < min(k, passing) and params.nprobe < nlist:
            params.nprobe = nlist  # the probed lists held too few visible rows
            _, labels = ivf.search(query, fetch, params=params)
            rows = labels[0][labels[0] >= 0]
        del bitmap, selector
        if len(rows) == 0:
            return []
        rows = np.sort(rows)  # memory-map pages in order
        scores = self.vectors[rows].astype(np.float32) @ query[0]
        self._rescored += len(rows)
        if self._rescored >= RELEASE_AFTER_ROWS:
            self.release()
        order = np.argsort(-scores)[:k]
        return list(zip(self.ids[rows[order]].tolist(), scores[order].tolist(), strict=True))

    def _faiss(self) -> Any:
        """The int8 IVF index over the rows, built once per process from the stored centroids
        and cluster assignments (no k-means, no re-assignment), extended as rows are added."""
        if self._ivf is None or self._ivf_rows < self.rows:
            self._build_lists()
        return self._ivf

    def _build_lists(self) -> None:
        if self._ivf is None:
            quantizer = faiss.IndexFlatIP(self.dim)
            quantizer.add(self.centroids)
            ivf = faiss.IndexIVFScalarQuantizer(
                quantizer,
                self.dim,
                len(self.centroids),
                faiss.ScalarQuantizer.QT_8bit,
                faiss.METRIC_INNER_PRODUCT,
            )
            step = max(1, self.rows // 20_000)
            ivf.train(np.ascontiguousarray(self.vectors[::step], dtype=np.float32))
            self._ivf, self._ivf_rows = ivf, 0
        for start in range(self._ivf_rows, self.rows, CHUNK):
            end = min(start + CHUNK, self.rows)
            block = np.ascontiguousarray(self.vectors[start:end], dtype=np.float32)
            labels = np.arange(start, end, dtype=np.int64)
            assign = np.ascontiguousarray(self.cluster[start:end], dtype=np.int64)
            self._ivf.add_core(
                end - start, faiss.swig_ptr(block), faiss.swig_ptr(labels), faiss.swig_ptr(assign)
            )
            self._ivf_rows = end
        # Reading every row to build the lists mapped them all; only the few rescored per
        # query need to stay resident (the page cache keeps the rest at hand).
        self.release()

    def release(self) -> None:
        """Unmap the float16 pages read so far (they stay in the page cache, out of our RSS)."""
        mapped = getattr(self.vectors, "_mmap", None)  # numpy.memmap's own mmap, when mapped
        if mapped is not None:
            mapped.madvise(mmap.MADV_DONTNEED)
        self._rescored = 0

    def nearest_clusters(self, vectors: np.ndarray, probes: int) -> np.ndarray:
        """(len(vectors), probes) cluster numbers, nearest first."""
        probes = min(probes, len(self.centroids))
        sims = vectors @ self.centroids.T
        if probes == 1:
            return np.argmax(sims, axis=1)[:, None]
        top = np.argpartition(-sims, probes - 1, axis=1)[:, :probes]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1)
        return np.take_along_axis(top, order, axis=1)
