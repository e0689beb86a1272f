"""The vector index's files: building, checking and keeping up (sleep's cross-link step).

What is kept, and why, is memory.vectors.index's docstring. open_index loads the files and checks
them against the database; sync_index appends new vectors or rebuilds (a log line, never a
crash). Log lines go to grove.vector_index, the logger the index has always used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import faiss
import numpy as np
from django.conf import settings
from django.db import connection

from memory.chunks import chunks
from memory.vectors.search import CHUNK, VectorIndex

if TYPE_CHECKING:
    import numpy.typing as npt

logger = logging.getLogger("grove.vector_index")

VERSION = 1
# Rows per IVF list is about sqrt(n)/2: cross-link's join costs n * PROBES * n / nlist products
# and its assignment n * nlist, so nlist near 2 * sqrt(n) balances the two.
TRAIN_PER_LIST = 30
MIN_LIST_ROWS = 32


def _nlist(rows: int) -> int:
    # At least MIN_LIST_ROWS rows a list: a small graph gets few lists (one list is exact).
    return int(max(1, min(8192, 2 * np.sqrt(rows), rows / MIN_LIST_ROWS)))


def index_dir(model: str) -> Path:
    """One directory per (database file, model): a data dir may serve several databases."""
    db = str(connection.settings_dict["NAME"])
    key = hashlib.sha256(f"{db}\0{model}".encode()).hexdigest()[:16]
    return Path(settings.GROVE_VECTOR_INDEX_DIR) / key


# --- files -----------------------------------------------------------------------------------


def _checksum(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _load_files(path: Path, *, model: str, dim: int) -> VectorIndex:
    """The index as stored, or ValueError naming what does not match."""
    meta_path = path / "meta.json"
    if not meta_path.exists():
        raise ValueError("missing")
    meta = json.loads(meta_path.read_text())
    for key, want in (("version", VERSION), ("model", model), ("dim", dim)):
        if meta.get(key) != want:
            raise ValueError(f"{key} is {meta.get(key)!r}, expected {want!r}")
    if _checksum(path / "rows.npz") != meta["checksum"]:
        raise ValueError("rows.npz checksum differs")
    with np.load(path / "rows.npz") as stored:
        arrays = {name: stored[name] for name in stored.files}
    rows = int(meta["rows"])
    if len(arrays["ids"]) != rows:
        raise ValueError(f"rows.npz holds {len(arrays['ids'])} rows, meta says {rows}")
    size = (path / "vectors.f16").stat().st_size
    if size < rows * dim * 2:
        raise ValueError(f"vectors.f16 holds {size // (dim * 2)} rows, meta says {rows}")
    vectors = np.memmap(path / "vectors.f16", dtype="<f2", mode="r", shape=(rows, dim))
    return VectorIndex(
        path=path,
        model=model,
        dim=dim,
        last_vector_id=int(meta["last_vector_id"]),
        trained_rows=int(meta["trained_rows"]),
        skipped=int(meta["skipped"]),
        ids=arrays["ids"],
        domain=arrays["domain"],
        domains=list(meta["domains"]),
        wild=arrays["wild"],
        created=arrays["created"],
        cluster=arrays["cluster"],
        centroids=arrays["centroids"],
        vectors=vectors,
    )


def _verify_against_database(index: VectorIndex) -> None:
    """ValueError unless the database holds exactly these rows up to the last vector id (a
    replaced, restored or rolled-back database does not), spot-checking a few vectors."""
    with connection.cursor() as cursor:
        # Counted on the (model, node) index alone: no vector blob is read.
        cursor.execute(
            "SELECT count(*) FROM memory_vector WHERE model = %s AND id <= %s",
            [index.model, index.last_vector_id],
        )
        count = cursor.fetchone()[0]
        if count != index.rows + index.skipped:
            raise ValueError(
                f"the database holds {count} vectors up to the mark, the index "
                f"{index.rows} (+{index.skipped} skipped)"
            )
        if index.rows == 0:
            return
        probe = sorted({0, index.rows // 2, index.rows - 1})
        ids = [int(index.ids[r]) for r in probe]
        cursor.execute(
            "SELECT node_id, data FROM memory_vector WHERE model = %s AND node_id IN "
            f"({','.join(['%s'] * len(ids))})",
            [index.model, *ids],
        )
        found = {node_id: bytes(data) for node_id, data in cursor.fetchall()}
    for row, node_id in zip(probe, ids, strict=True):
        blob = found.get(node_id)
        if blob is None or len(blob) != index.dim * 4:
            raise ValueError(f"node {node_id} has no vector in the database")
        stored = np.frombuffer(blob, dtype="<f4").astype(np.float16)
        if not np.allclose(stored, index.vectors[row], atol=1e-3):
            raise ValueError(f"node {node_id}'s vector differs from the database's")


def _save(index: VectorIndex) -> None:
    """rows.npz and meta.json rewritten through temporary files and renames, meta last, so a
    crash leaves either the old index or the new one (a checksum mismatch rebuilds)."""
    tmp = index.path / "rows.tmp.npz"
    np.savez(
        tmp,
        ids=index.ids,
        domain=index.domain,
        wild=index.wild,
        created=index.created,
        cluster=index.cluster,
        centroids=index.centroids,
    )
    os.replace(tmp, index.path / "rows.npz")
    meta = {
        "version": VERSION,
        "model": index.model,
        "dim": index.dim,
        "rows": index.rows,
        "last_vector_id": index.last_vector_id,
        "trained_rows": index.trained_rows,
        "skipped": index.skipped,
        "domains": index.domains,
        "checksum": _checksum(index.path / "rows.npz"),
    }
    (index.path / "meta.tmp.json").write_text(json.dumps(meta))
    os.replace(index.path / "meta.tmp.json", index.path / "meta.json")


# --- building and keeping up -----------------------------------------------------------------


def epoch(value: Any) -> float:
    """Seconds since 1970 of a stored datetime (naive text is UTC, as Django's SQLite keeps it)."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _stream(index: VectorIndex) -> Iterator[list[tuple[Any, ...]]]:
    """Rows (vector id, node id, float32 blob, domain, jurisdiction, created) after the index's
    last vector, in chunks. A row of another dim is skipped (models never mix), and so is a blob
    whose length disagrees with its dim, with a log line; both are counted in index.skipped."""
    with connection.cursor() as cursor:
        # CROSS JOIN and unary + keep SQLite on the vector id range (new rows only);
        # PostgreSQL has neither form and needs no hint.
        pg = connection.vendor == "postgresql"
        cursor.execute(
            "SELECT v.id, v.node_id, v.data, n.domain, n.jurisdiction, n.created_at, v.dim "
            f"FROM memory_vector v {'' if pg else 'CROSS '}JOIN memory_node n ON n.id = v.node_id "
            f"WHERE {'' if pg else '+'}v.model = %s AND v.id > %s ORDER BY v.id",
            [index.model, index.last_vector_id],
        )
        while rows := cursor.fetchmany(CHUNK):
            good = [r for r in rows if r[6] == index.dim and len(r[2]) == index.dim * 4]
            for bad in (r for r in rows if r[6] == index.dim and len(r[2]) != index.dim * 4):
                logger.warning(
                    "vector %s (node %s) has %s bytes for dim %s: skipped",
                    bad[0],
                    bad[1],
                    len(bad[2]),
                    index.dim,
                )
            index.skipped += len(rows) - len(good)
            index.last_vector_id = int(rows[-1][0])
            if good:
                yield good


def _count(model: str, dim: int) -> int:
    # On the (model, node) index alone: filtering on dim read every row's page (1M vectors,
    # a second of each sleep). A row of another dim is rare, and skipped when read.
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_vector WHERE model = %s", [model])
        count: int = cursor.fetchone()[0]
        return count


def _train(model: str, dim: int, rows: int) -> npt.NDArray[np.float32]:
    """IVF centroids: spherical k-means (faiss) over a random sample of the model's vectors."""
    nlist = min(_nlist(rows), max(1, rows))
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM memory_vector WHERE model = %s", [model])
        ids = np.fromiter((r[0] for r in cursor.fetchall()), dtype=np.int64)
        rng = np.random.default_rng(20241130)
        chosen = np.sort(rng.choice(ids, min(len(ids), nlist * TRAIN_PER_LIST), replace=False))
        blobs: list[bytes] = []
        for chunk in chunks(chosen.tolist()):
            cursor.execute(
                f"SELECT data FROM memory_vector WHERE id IN ({','.join(['%s'] * len(chunk))})",
                chunk,
            )
            blobs += [bytes(r[0]) for r in cursor.fetchall() if len(r[0]) == dim * 4]
    sample = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, dim)
    if len(sample) == 0:  # every blob damaged: one list, so search is an exact scan
        return np.eye(1, dim, dtype=np.float32)
    nlist = min(nlist, len(sample))
    kmeans = faiss.Kmeans(dim, nlist, niter=10, spherical=True, seed=1234, verbose=False)
    kmeans.cp.min_points_per_centroid = 1  # small graphs: fewer points per list is fine
    kmeans.train(np.ascontiguousarray(sample))
    return np.ascontiguousarray(kmeans.centroids, dtype=np.float32)


def _empty(
    path: Path, *, model: str, dim: int, centroids: npt.NDArray[np.float32], rows: int
) -> VectorIndex:
    path.mkdir(parents=True, exist_ok=True)
    # A new file, not a truncated one: a recall process may still map the old rows, and
    # truncating a mapped file would kill it at its next read (SIGBUS).
    (path / "vectors.f16").unlink(missing_ok=True)
    (path / "vectors.f16").write_bytes(b"")
    return VectorIndex(
        path=path,
        model=model,
        dim=dim,
        last_vector_id=0,
        trained_rows=rows,
        skipped=0,
        ids=np.zeros(0, dtype=np.int64),
        domain=np.zeros(0, dtype=np.int32),
        domains=[],
        wild=np.zeros(0, dtype=bool),
        created=np.zeros(0, dtype=np.float64),
        cluster=np.zeros(0, dtype=np.int32),
        centroids=centroids,
        vectors=np.zeros((0, dim), dtype=np.float16),
    )


def _append(index: VectorIndex) -> int:
    """Append the database's vectors newer than the index's last one; returns how many."""
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("ids", "domain", "wild", "created")}
    parts["cluster"] = []
    codes = index.codes()
    added = 0
    with (index.path / "vectors.f16").open("r+b") as handle:
        handle.truncate(index.rows * index.dim * 2)  # a crash may have left a partial tail
        handle.seek(0, os.SEEK_END)
        for rows in _stream(index):
            flat = np.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype="<f4")
            block = flat.reshape(len(rows), index.dim)
            handle.write(block.astype("<f2").tobytes())
            parts["ids"].append(np.array([r[1] for r in rows], dtype=np.int64))
            parts["domain"].append(
                np.array([codes.setdefault(r[3], len(codes)) for r in rows], dtype=np.int32)
            )
            parts["wild"].append(np.array([r[4] == "wild" for r in rows], dtype=bool))
            parts["created"].append(np.array([epoch(r[5]) for r in rows], dtype=np.float64))
            parts["cluster"].append(index.nearest_clusters(block, 1)[:, 0].astype(np.int32))
            added += len(rows)
    if added:
        for name, chunks in parts.items():
            setattr(index, name, np.concatenate([getattr(index, name), *chunks]))
        index.domains = sorted(codes, key=codes.__getitem__)
    index.vectors = np.memmap(
        index.path / "vectors.f16", dtype="<f2", mode="r", shape=(index.rows, index.dim)
    )
    return added


def open_index(*, model: str, dim: int) -> VectorIndex | None:
    """The stored index if it matches the database, else None with a log line saying why."""
    path = index_dir(model)
    try:
        index = _load_files(path, model=model, dim=dim)
        _verify_against_database(index)
    except Exception as exc:  # a damaged index is rebuilt, never a crash: log what was wrong
        reason = str(exc) or type(exc).__name__
        if reason == "missing":
            logger.info("vector index for %s: none at %s", model, path)
        else:
            logger.warning("vector index for %s at %s does not match (%s)", model, path, reason)
        return None
    return index


def sync_index(*, model: str, dim: int) -> VectorIndex | None:
    """Bring the model's index up to date with the database (sleep's cross-link step): append
    new vectors, or rebuild when it is missing, does not match, or has grown fourfold since its
    centroids were trained. None (and nothing written) below GROVE_ANN_MIN_ROWS vectors."""
    total = _count(model, dim)
    if total < max(settings.GROVE_ANN_MIN_ROWS, 1):
        return None
    index = open_index(model=model, dim=dim)
    if index is not None and total >= 4 * max(index.trained_rows, 1):
        logger.info("vector index for %s: %s rows since training; retraining", model, total)
        index = None
    if index is None:
        logger.warning("vector index for %s: building over %s vectors", model, total)
        path = index_dir(model)
        index = _empty(path, model=model, dim=dim, centroids=_train(model, dim, total), rows=total)
    if _append(index) or not (index.path / "meta.json").exists():
        _save(index)
    return index
