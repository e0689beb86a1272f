"""Likeness in meaning between a query and given nodes: the cosine of the query's vector to the
stored vectors of the current model (memory.vectors.embed). The reranker's meaning signals
(memory.recall.rerank) read it for its pool and for the turns beside each candidate, so a node
the vector list did not rank still gets its likeness.
The query's vector is memory.vectors.embed.embed_query's, kept for the last few queries
(query_vector): the vector list and the likeness of one recall embed the query once. A reply
is also read in its context: with the turn it answers (in_context).
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
# How much the turn a node answers weighs in its context (in_context): chosen among 0.25, 0.5,
# 0.75 and 1 by an inner leave-one-conversation-out on LoCoMo dev's training folds
# (docs/recall.md, "The turn a reply answers").
ANSWERED = 0.5


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


def in_context(
    model: str, query: npt.NDArray[np.float32], ids: Sequence[int], answered: dict[int, int]
) -> tuple[dict[int, float], dict[int, float]]:
    """(own, in context), node id -> cosine of `query` to its stored `model` vector, and to the
    unit mean of that vector and ANSWERED times the vector of the node it answers (`answered`:
    id -> the node it responds to, given only where the reader may see that node). A reply
    ("this is Max!") means what it answers ("Do you have pets?") as well as its own words;
    without a node it answers, or one without a vector, its context is its own. A node without
    a vector of this model (not yet slept) is absent from both."""
    if not np.any(query):
        return {}, {}
    ids = list(dict.fromkeys(ids))
    found = vectors(model, [*ids, *answered.values()], len(query))
    have = [i for i in ids if i in found]
    if not have:
        return {}, {}
    own = np.stack([found[i] for i in have])
    mixed = own.copy()
    replies = [r for r, i in enumerate(have) if answered.get(i) in found]
    if replies:
        mixed[replies] += ANSWERED * np.stack([found[answered[have[r]]] for r in replies])
        # (a unit vector plus half of another is at least half a unit long: never zero)
        mixed[replies] /= np.linalg.norm(mixed[replies], axis=1, keepdims=True)
    return dict(zip(have, (own @ query).tolist(), strict=True)), dict(
        zip(have, (mixed @ query).tolist(), strict=True)
    )


def centroid(
    query: npt.NDArray[np.float32], found: dict[int, npt.NDArray[np.float32]]
) -> npt.NDArray[np.float32]:
    """The unit mean of the query's vector and those of `found` (the first results): a second
    query, for what the first results are about beside what the query said."""
    total = query + np.sum(list(found.values()), axis=0) if found else query
    norm = float(np.linalg.norm(total))
    unit: npt.NDArray[np.float32] = (total / norm if norm else total).astype(np.float32)
    return unit
