"""The exact vector scan: the current embedder's vectors in a matrix cached per process
(refreshed by appending the rows written since), and the exact top k over it, with a float16
first pass that finds the rows that can be in it. memory.recall searches it beside the vector
index (memory.vectors.search), which holds the rows older than its last build.
"""

from __future__ import annotations

import functools
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import faiss
import numpy as np
from django.db import connection
from threadpoolctl import ThreadpoolController

from memory.vectors.embed import get_embedder
from memory.vectors.index import epoch
from memory.visibility import Visibility

if TYPE_CHECKING:
    import numpy.typing as npt

logger = logging.getLogger("grove.recall")

# The exact scan's first pass over float16 rows (_coarse_rows), for matrices in this range of rows:
# smaller ones are cheap in float32, larger ones (no vector index yet) would double the memory.
COARSE_ROWS = (4_096, 200_000)
COARSE_FETCH = 3  # rows fetched per wanted one; more only when scores crowd the k-th
# Bound on |float16 score - float32 score| per unit of |q| * |row|: 2**-11 from float16's 11-bit
# significand, and room for both sums' float32 rounding (256 terms: about 3e-5).
COARSE_ERROR = 2**-11 + 1e-4


@dataclass
class Matrix:
    key: tuple[str, str]
    dim: int
    floor: int = 0  # rows have vector ids above this (the vector index holds the rest)
    last: tuple[int, int, str] | None = None  # (vector id, node id, created_at) of the last row
    n: int = 0
    ids: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    vectors: npt.NDArray[np.float32] = field(
        default_factory=lambda: np.zeros((0, 1), dtype=np.float32)
    )
    domain_codes: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    wild: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    created: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    domains: dict[str, int] = field(default_factory=dict)
    norm_max: float = 0.0  # the largest row norm so far (bounds the float16 scan's error)
    coarse: Any = None  # float16 copy of rows [0, coarse.ntotal) for the first pass (faiss)


_matrices: dict[tuple[str, str], Matrix] = {}
_matrix_lock = threading.Lock()


def vector_matrix(*, after_id: int = 0) -> Matrix:
    """The current embedder's vectors with a Vector id above `after_id` (those the vector index
    does not hold yet; all of them without an index) and the immutable columns used for
    filtering, refreshed by appending rows with a larger Vector id. Vectors are never updated in
    place; a mismatch of the last cached row (a rolled-back or replaced database) or a new floor
    rebuilds it. Rows of another dimension, or whose blob disagrees with their dim, are skipped
    (the latter with a log line): models never mix, and a damaged row must not stop recall."""
    embedder = get_embedder()
    key = (str(connection.settings_dict["NAME"]), embedder.name)
    with _matrix_lock:
        cache = _matrices.get(key)
        if cache is not None and cache.floor != after_id:
            cache = None
        with connection.cursor() as cursor:
            if cache is not None and cache.last is not None:
                cursor.execute(
                    "SELECT id, node_id, created_at FROM memory_vector WHERE id = %s",
                    [cache.last[0]],
                )
                row = cursor.fetchone()
                if row is None or (row[0], row[1], str(row[2])) != cache.last:
                    cache = None
            if cache is None:
                cache = Matrix(key=key, dim=embedder.dim, floor=after_id)
                cache.vectors = np.zeros((0, embedder.dim), dtype=np.float32)
                _matrices[key] = cache
            last_id = cache.last[0] if cache.last else cache.floor
            cursor.execute("SELECT max(id) FROM memory_vector")
            newest = cursor.fetchone()[0] or 0
            if newest > last_id:
                # Ids are assigned in order, so this bounds the new rows: one allocation, and
                # rows stream in chunks instead of holding every blob in Python at once.
                _reserve(cache, cache.n + newest - last_id)
                # CROSS JOIN and unary + keep SQLite on the vector id range (new rows only),
                # not a scan of every node or of the model index; PostgreSQL's planner needs
                # no hint (and has no unary + on text).
                pg = connection.vendor == "postgresql"
                cursor.execute(
                    "SELECT v.id, v.node_id, v.created_at, v.data, n.domain, n.jurisdiction, "
                    f"n.created_at FROM memory_vector v {'' if pg else 'CROSS '}JOIN memory_node "
                    f"n ON n.id = v.node_id WHERE {'' if pg else '+'}v.model = %s AND "
                    f"{'' if pg else '+'}v.dim = %s AND v.id > %s ORDER BY v.id",
                    [embedder.name, embedder.dim, last_id],
                )
                while rows := cursor.fetchmany(5000):
                    _append(cache, rows)
        return cache


def _reserve(cache: Matrix, need: int) -> None:
    if need > len(cache.ids):
        capacity = max(need, int(len(cache.ids) * 1.25) + 1024)
        cache.ids = np.resize(cache.ids, capacity)
        cache.domain_codes = np.resize(cache.domain_codes, capacity)
        cache.wild = np.resize(cache.wild, capacity)
        cache.created = np.resize(cache.created, capacity)
        grown = np.zeros((capacity, cache.dim), dtype=np.float32)
        grown[: cache.n] = cache.vectors[: cache.n]
        cache.vectors = grown


def _append(cache: Matrix, rows: list[tuple[Any, ...]]) -> None:
    # A blob of the wrong length (edited in the file) is skipped, not reshaped into a crash;
    # integrity's vectors_of_wrong_dimension names it.
    for bad in (r for r in rows if len(r[3]) != cache.dim * 4):
        logger.warning(
            "vector %s (node %s) has %s bytes for dim %s: skipped",
            bad[0],
            bad[1],
            len(bad[3]),
            cache.dim,
        )
    last = rows[-1]
    rows = [r for r in rows if len(r[3]) == cache.dim * 4]
    count = len(rows)
    if not count:
        cache.last = (last[0], last[1], str(last[2]))
        return
    _reserve(cache, cache.n + count)
    block = np.frombuffer(b"".join(bytes(r[3]) for r in rows), dtype="<f4").reshape(
        count, cache.dim
    )
    end = cache.n + count
    cache.vectors[cache.n : end] = block
    cache.ids[cache.n : end] = [r[1] for r in rows]
    cache.domain_codes[cache.n : end] = [
        cache.domains.setdefault(r[4], len(cache.domains)) for r in rows
    ]
    cache.wild[cache.n : end] = [r[5] == "wild" for r in rows]
    cache.created[cache.n : end] = [epoch(r[6]) for r in rows]
    cache.norm_max = max(cache.norm_max, float(np.linalg.norm(block, axis=1).max()))
    cache.n = end
    cache.last = (last[0], last[1], str(last[2]))


@functools.cache
def _blas() -> ThreadpoolController:
    # Discovering the loaded BLAS libraries once; each query then only sets a thread count.
    return ThreadpoolController()


def exact_candidates(
    matrix: Matrix, q: npt.NDArray[np.float32], vis: Visibility, k: int
) -> list[tuple[int, float]]:
    n = matrix.n  # rows appended meanwhile by another thread are left to the next recall
    mask = vis.row_mask(
        domain=matrix.domain_codes[:n],
        codes=matrix.domains,
        wild=matrix.wild[:n],
        created=matrix.created[:n],
    )
    rows = _coarse_rows(matrix, n, q, mask, k)
    if rows is not None and len(rows) == 0:
        return []  # nothing visible
    if rows is None:
        # One thread: a matrix-vector product is memory-bound, and waking BLAS's worker threads
        # for every query cost more than they saved (bench, 10k nodes: p50 16 ms -> 4 ms).
        with _blas().limit(limits=1, user_api="blas"):
            scores = matrix.vectors[:n] @ q
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
    else:
        # A few hundred rows: setting and restoring the thread limit cost twice the product.
        scores = matrix.vectors[rows] @ q
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top])]
    top = top[np.isfinite(scores[top])]
    ids = matrix.ids if rows is None else matrix.ids[rows]
    # Whole arrays to Python numbers at once: per element it cost a third of the stage at 10k.
    return list(zip(ids[top].tolist(), scores[top].tolist(), strict=True))


def _coarse_rows(
    matrix: Matrix, n: int, q: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_] | None, k: int
) -> npt.NDArray[np.int64] | None:
    """The rows that can be among the exact top k, found by a first pass over a float16 copy
    (half the bytes of the float32 scan, which is memory-bound); None to scan every row.

    Exact, not approximate: float16 keeps 11 bits, so a row's float16 score is within
    COARSE_ERROR * |q| * |row| of its float32 one (|sum q_i v_i d_i| <= 2**-11 * |q| |v| by
    Cauchy-Schwarz, plus both sums' rounding). Every row whose float16 score is within twice
    that of the k-th best is kept and rescored in float32; a row left out scores below k rows
    in float32 too. When the fetched rows do not reach that far, every row is scanned."""
    if not COARSE_ROWS[0] <= n <= COARSE_ROWS[1] or not np.isfinite(matrix.norm_max):
        return None
    passing = n if mask is None else int(mask.sum())
    fetch = min(k * COARSE_FETCH, passing)
    if fetch == 0:
        return np.zeros(0, dtype=np.int64)
    query = np.ascontiguousarray(q, dtype=np.float32).reshape(1, -1)
    params = faiss.SearchParameters()
    # The bitmap must outlive the search: faiss keeps only a pointer to it. Its length in bytes
    # bounds the rows it lets through to the mask's n.
    bitmap = None if mask is None else np.packbits(mask, bitorder="little")
    with _matrix_lock:  # faiss adds and searches must not interleave
        coarse = _coarse_index(matrix)
        if bitmap is not None:
            params.sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
        elif coarse.ntotal > n:
            params.sel = faiss.IDSelectorRange(0, n)
        faiss.omp_set_num_threads(1)
        found: npt.NDArray[np.float32]
        labels: npt.NDArray[np.int64]
        found, labels = coarse.search(query, fetch, params=params)
    del bitmap, params
    keep = labels[0] >= 0
    found, labels = found[0][keep], labels[0][keep]
    if len(labels) < fetch:
        return None  # fewer than the visible rows came back: let the full scan decide
    if len(labels) == passing:
        return np.sort(labels)  # every visible row is a candidate
    margin = 2 * COARSE_ERROR * float(np.linalg.norm(q)) * matrix.norm_max
    bound: np.floating[Any] = found[min(k, len(found)) - 1] - margin
    if found[-1] >= bound:
        return None  # rows beyond the fetch may still qualify
    return np.sort(labels[found >= bound])


def _coarse_index(matrix: Matrix) -> Any:
    """The float16 copy of the matrix's rows, extended to its current rows (under the lock)."""
    if matrix.coarse is None or matrix.coarse.ntotal > matrix.n:
        matrix.coarse = faiss.IndexScalarQuantizer(
            matrix.dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        )
    if matrix.coarse.ntotal < matrix.n:
        block = matrix.vectors[matrix.coarse.ntotal : matrix.n]
        matrix.coarse.add(np.ascontiguousarray(block, dtype=np.float32))
    return matrix.coarse
