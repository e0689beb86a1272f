"""The vector index: approximate nearest neighbours for recall and cross-link (DESIGN.md, Vector
index), used once a model has GROVE_ANN_MIN_ROWS vectors; below that an exact scan is fast.

What is kept, per database and embedding model, in GROVE_VECTOR_INDEX_DIR/<key>/:
- vectors.f16: every vector as float16, in vector-id order, append-only and memory-mapped (half
  the bytes of float32; cosines move by about 1e-3, which ranks and thresholds alike);
- rows.npz: per row the node id and the immutable columns visibility filters on (domain,
  jurisdiction, created_at), its IVF cluster, and the IVF centroids (faiss k-means);
- meta.json: model, dim, rows, the last vector id, and a checksum of rows.npz.
Sleep's cross-link step calls sync_index(): it appends vectors newer than the last one, or
rebuilds everything when the files are missing or do not match the database (a log line, never
a crash), and retrains the centroids when the rows have grown fourfold since they were drawn.

Recall searches a faiss IVF index with int8 codes (built in-process from these files, a quarter
of float32's bytes), filtered during the search by a bitmap of the rows the caller may see (the
same predicate the exact scan uses: Visibility.row_mask), then rescores its candidates with the
float16 vectors. When the filter leaves few rows, every list is scanned: exact over those rows.
Cross-link joins each new vector with the members of its nearest few clusters (matrix products).

Three files: memory.vectors.store keeps the files (build, check, append), memory.vectors.search
holds a loaded index and searches it, and this module says which index a process uses
(current) and carries the names other modules import.
"""

from __future__ import annotations

import threading

import numpy as np
from django.db import connection

from memory.vectors.search import VectorIndex
from memory.vectors.store import epoch, index_dir, open_index, sync_index

__all__ = [
    "CROSSLINK_PROBES",
    "VectorIndex",
    "current",
    "epoch",
    "index_dir",
    "open_index",
    "sync_index",
]

CROSSLINK_PROBES = 12  # clusters each new vector is joined with (bench: 95% edge agreement at 10k)


_cache: dict[tuple[str, str], tuple[tuple[int, int], VectorIndex | None]] = {}
_cache_lock = threading.Lock()


def current(*, model: str, dim: int) -> VectorIndex | None:
    """The index recall may use in this process: reloaded when sleep rewrote it (meta.json's
    stamp), its int8 faiss lists carried over when only rows were added. None without one."""
    meta = index_dir(model) / "meta.json"
    try:
        stat = meta.stat()
    except OSError:
        return None
    stamp = (stat.st_mtime_ns, stat.st_size)
    key = (str(connection.settings_dict["NAME"]), model)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and cached[0] == stamp:
            index = cached[1]
        else:
            index = open_index(model=model, dim=dim)
            old = cached[1] if cached else None
            if (
                index is not None
                and old is not None
                and old._ivf is not None
                and old.rows <= index.rows
                and np.array_equal(old.centroids, index.centroids)
            ):
                index._ivf, index._ivf_rows = old._ivf, old._ivf_rows
            _cache[key] = (stamp, index)
    if index is not None and not _still_there(index):
        with _cache_lock:
            _cache.pop(key, None)
        return None
    return index


def _still_there(index: VectorIndex) -> bool:
    """The index's last row still names the same node (one lookup): a replaced or rolled-back
    database is caught before any result is read from a stale index."""
    if index.rows == 0:
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT node_id FROM memory_vector WHERE id = %s", [index.last_vector_id])
        row = cursor.fetchone()
    return row is not None and row[0] == int(index.ids[-1])
