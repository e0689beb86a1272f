"""Likeness in meaning between a query and given nodes: the cosine of the query's vector to the
stored vectors of the current model (memory.vectors.embed). The reranker's meaning signals
(memory.recall.rerank) read it for its pool and for the turns beside each candidate, so a node
the vector list did not rank still gets its likeness.
The query's vector is memory.vectors.embed.embed_query's, kept for the last few queries
(query_vector): the vector list and the likeness of one recall embed the query once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from django.db import connection

from memory.vectors.embed import embed_query

if TYPE_CHECKING:
    import numpy.typing as npt

# Queries whose vectors are kept: one recall asks twice (vector list, likeness), on two threads
# at 50k rows and more; a few dozen cover concurrent recalls of a server's workers.
KEPT_QUERIES = 64
_kept: OrderedDict[tuple[str, str], Any] = OrderedDict()
_kept_lock = threading.Lock()


def query_vector(embedder: Any, query: str) -> npt.NDArray[np.float32]:
    """embed_query(embedder, query), made once for the last KEPT_QUERIES (model, query) pairs."""
    key = (embedder.name, query)
    with _kept_lock:
        if key in _kept:
            _kept.move_to_end(key)
            vector: npt.NDArray[np.float32] = _kept[key]
            return vector
    vector = np.asarray(embed_query(embedder, query), dtype=np.float32).reshape(-1)
    vector.setflags(write=False)  # shared by callers
    with _kept_lock:
        _kept[key] = vector
        while len(_kept) > KEPT_QUERIES:
            _kept.popitem(last=False)
    return vector


def vectors(model: str, ids: Sequence[int], dim: int) -> dict[int, npt.NDArray[np.float32]]:
    """Node id -> its stored `model` vector (of `dim` floats); a node without one is absent. The
    caller has already judged `ids` visible: this reads vectors, not who may see them."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    marks = ",".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT node_id, data FROM memory_vector WHERE model = %s AND node_id IN ({marks})",
            [model, *ids],
        )
        rows = [(node_id, bytes(data)) for node_id, data in cursor.fetchall()]
    return {
        node_id: np.frombuffer(data, dtype="<f4") for node_id, data in rows if len(data) == dim * 4
    }


def cosines(model: str, query: npt.NDArray[np.float32], ids: Sequence[int]) -> dict[int, float]:
    """Node id -> cosine of its stored `model` vector to `query` (vectors are L2-normalised);
    a node without a vector of this model (not yet slept) is absent."""
    if not np.any(query):
        return {}
    found = vectors(model, ids, len(query))
    if not found:
        return {}
    scores = np.stack(list(found.values())) @ query
    return {node_id: float(s) for node_id, s in zip(found, scores, strict=True)}


def centroid(
    query: npt.NDArray[np.float32], found: dict[int, npt.NDArray[np.float32]]
) -> npt.NDArray[np.float32]:
    """The unit mean of the query's vector and those of `found` (the first results): a second
    query, for what the first results are about beside what the query said."""
    total = query + np.sum(list(found.values()), axis=0) if found else query
    norm = float(np.linalg.norm(total))
    unit: npt.NDArray[np.float32] = (total / norm if norm else total).astype(np.float32)
    return unit
