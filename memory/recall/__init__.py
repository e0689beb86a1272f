"""Recall: find what the graph holds about a query, and hand back previews, never bodies.

Candidates come from the word index (memory.recall.lexical) and from cosine similarity over the
vector index (memory.vectors.search) and an exact scan of the vectors written since its build
(memory.vectors.matrix), each computed only over what the caller may see (domains, scope,
created by as_of); the vector list (asked the query without the speakers it names, once the
first word list has said which) runs beside the other word lists on a worker thread (here).
memory.recall.rank fuses, expands and orders them.
Decay, trust (sealed, rejected, superseded) and as-of liveness are checked for candidates only.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.db.models import Field
from django.utils import timezone

from memory import audit
from memory.errors import Invalid
from memory.models import ApiToken, EventKind, RecallLog
from memory.packets import packet
from memory.recall import gather, rank
from memory.recall import why as why_line
from memory.recall.lexical import match_expression, query_terms
from memory.scrub import redact
from memory.vectors.embed import get_embedder
from memory.vectors.index import current as current_index
from memory.vectors.likeness import centroid, in_context, query_vector, vectors
from memory.vectors.matrix import Matrix, exact_candidates, vector_matrix
from memory.visibility import Visibility, live_at

# Re-exported: other modules read these names from recall.
__all__ = ["live_at", "match_expression", "query_terms", "recall"]

logger = logging.getLogger("grove.recall")

MAX_LIMIT = 100
# How much of an agent's query its recalled event keeps (the RecallLog row keeps 2,000).
RECALLED_QUERY_CHARS = 500
# Below this cosine, similarity is projection noise (random 256-d projections of unrelated
# texts scatter about zero with a spread of about 1/sqrt(256) = 0.06), not meaning.
VECTOR_MIN_SIMILARITY = 0.15

# The vector list is searched on a worker thread while the caller's thread reads the word lists:
# faiss, numpy and SQLite all run outside the GIL, so on an idle second core a recall waits for
# the longer of the two, not their sum. The worker never touches the database (the caller reads
# the index and the newest vectors first), so it needs no connection of its own.
# One pool per process: a pool's threads do not survive a fork (django-q2's workers, a web
# server's), and a pool inherited from the parent would queue work for threads that are gone.
_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()
# Below this many rows the search (about 1 ms at 10k) runs on the caller's thread: handing it
# over and sharing the GIL cost about what the overlap saved (bench: 10k no faster, 100k and 1M
# 3-5 ms less wall time at the median).
PARALLEL_FROM_ROWS = 50_000


def vector_search(query: str, vis: Visibility, k: int) -> Callable[[], list[tuple[int, float]]]:
    """Start the vector list (what _vector_candidates returns) and give back the call that waits
    for it, so the caller can read the word lists meanwhile."""
    embedder = get_embedder()
    index = current_index(model=embedder.name, dim=embedder.dim)
    matrix = vector_matrix(after_id=index.last_vector_id if index else 0)
    rows = matrix.n + (index.rows if index is not None else 0)
    if rows == 0:
        return list
    if rows < PARALLEL_FROM_ROWS:
        hits = _nearest(embedder, index, matrix, query, vis, k)
        return lambda: hits
    return _pool().submit(_nearest, embedder, index, matrix, query, vis, k).result


def _pool() -> ThreadPoolExecutor:
    """This process's vector worker pool (made on first use after a fork too)."""
    with _pools_lock:
        pool = _pools.get(os.getpid())
        if pool is None:
            _pools.clear()  # a parent's pool: its threads are not in this process
            pool = _pools[os.getpid()] = ThreadPoolExecutor(
                max_workers=os.cpu_count() or 2, thread_name_prefix="vectors"
            )
        return pool


def _vector_candidates(query: str, vis: Visibility, k: int) -> list[tuple[int, float]]:
    """The k nearest vectors the caller may see, best first, at or above VECTOR_MIN_SIMILARITY:
    from the vector index when sleep has built one (memory.vectors.index), plus an exact scan of
    the vectors written since; without an index, an exact scan of them all."""
    return vector_search(query, vis, k)()


def _nearest(
    embedder: Any, index: Any, matrix: Matrix, query: str, vis: Visibility, k: int
) -> list[tuple[int, float]]:
    """_vector_candidates' search, from the arrays alone (no database: it runs on the worker)."""
    return _nearest_to(query_vector(embedder, query), index, matrix, vis, k)


def _nearest_to(
    q: Any, index: Any, matrix: Matrix, vis: Visibility, k: int
) -> list[tuple[int, float]]:
    """The k nearest rows to the vector `q` the caller may see, at or above
    VECTOR_MIN_SIMILARITY, from the newest rows' matrix and the index."""
    if not np.any(q):
        return []
    hits = exact_candidates(matrix, q, vis, k) if matrix.n else []
    if index is not None:
        hits = sorted([*hits, *index.search(q, vis, k)], key=lambda h: -h[1])[:k]
    return [(node_id, score) for node_id, score in hits if score >= VECTOR_MIN_SIMILARITY]


def _meaning(
    query: str, ids: list[int], vis: Visibility
) -> tuple[dict[int, float], dict[int, float]]:
    """The cosines of the query to each of `ids` (rank's lawful pool) under the current model,
    alone and with the turn each answers where `vis` may see it (the reranker's MEANING)."""
    embedder = get_embedder()
    return in_context(embedder.name, query_vector(embedder, query), ids, gather.answered(ids, vis))


def _like(query: str, vis: Visibility, k: int, first: list[int]) -> list[tuple[int, float]]:
    """The second step's meaning list: the k visible nodes nearest to the unit mean of the
    query's vector and the `first` results' (lawful: rank judged them), through the same
    search and visibility as the vector list."""
    embedder = get_embedder()
    q = query_vector(embedder, query)
    index = current_index(model=embedder.name, dim=embedder.dim)
    matrix = vector_matrix(after_id=index.last_vector_id if index else 0)
    found = vectors(embedder.name, first, embedder.dim)
    return _nearest_to(centroid(q, found), index, matrix, vis, k)


def recall(
    query: str,
    *,
    scope: str = "home",
    domains: Iterable[str] | None = None,
    limit: int = 10,
    as_of: str | datetime | None = None,
    include_superseded: bool = False,
    actor: str = "owner",
    why: bool = False,
    forgotten: bool = False,
    token: ApiToken | None = None,
) -> list[dict[str, Any]]:
    """Ranked previews of what the caller may see about `query`; logs a RecallLog row.

    Reads the event clock (recency weight, COALESCE(referent_time, created_at)) and, for as_of,
    the store clock (created_at <= T) and the audit log's clock (Event.at <= T). Never counts as
    an access. Excludes decayed nodes and nodes whose trust is sealed or rejected; superseded
    only when include_superseded, labelled. Refuses (Invalid) an unknown scope, a limit outside
    1..100 and a naive or unparseable as_of. A query with no words returns [] (still logged).
    With `why`, each packet carries a short reason it is there (at most why.WHY_CHARS characters:
    matched words, vector cosine, via #id, speaker, date).
    With `forgotten` (a dig, memory.recall.dig), the same ranking over the decayed nodes only, under
    the same visibility otherwise (never as of T); the log row says it was a dig.
    Through an agent `token`, the recall is also a `recalled` event (query, scope, ids found),
    committed with its log row, so the owner's audit log lists it beside the agent's writes.
    """
    started = time.perf_counter()
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise Invalid(f"limit must be between 1 and {MAX_LIMIT}", code="bad_limit")
    vis = Visibility.of(domains=domains, scope=scope, as_of=as_of, forgotten=forgotten)
    query = query if isinstance(query, str) else ""
    terms = query_terms(query)
    results: list[dict[str, Any]] = []
    if terms:
        results = _rank(
            query, terms, vis, limit=limit, include_superseded=include_superseded, why=why
        )
    took_ms = (time.perf_counter() - started) * 1000
    now = timezone.now()
    ids = [p["id"] for p in results]
    kept, _ = redact(query)  # a key pasted into a query is no more stored than one written
    with transaction.atomic():
        _log(
            at=now,
            actor=actor or "owner",
            query=kept[:2000],
            scope=scope,
            domains=list(vis.domains) if vis.domains is not None else ["*"],
            as_of=vis.as_of,
            result_ids=ids,
            took_ms=round(took_ms, 3),
            dig=forgotten,
        )
        if token is not None:
            audit.record(
                EventKind.RECALLED,
                node=None,
                actor=actor,
                reason="dig" if forgotten else "",
                detail={"query": kept[:RECALLED_QUERY_CHARS], "scope": scope, "ids": ids},
                at=now,
                token=token,
            )
    return results


@functools.cache
def _log_insert() -> tuple[str, tuple[Field[Any, Any], ...]]:
    fields = tuple(f for f in RecallLog._meta.concrete_fields if not f.primary_key)
    columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    return f"INSERT INTO {RecallLog._meta.db_table} ({columns}) VALUES ({marks})", fields


def _log(**values: Any) -> None:
    """One RecallLog row: a single INSERT (atomic alone) with each value adapted by its own
    field, as the ORM would; the model's save path cost a tenth of a 10k recall."""
    sql, fields = _log_insert()
    params = [f.get_db_prep_save(values[f.attname], connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _rank(
    query: str,
    terms: list[str],
    vis: Visibility,
    *,
    limit: int,
    include_superseded: bool,
    why: bool = False,
) -> list[dict[str, Any]]:
    w = rank.WEIGHTS
    ranked = rank.rank(
        query,
        terms,
        vis,
        # rank starts the vector list once it knows which speakers the query names.
        vectors=(lambda asked: vector_search(asked, vis, w.vector_k)) if w.vector else None,
        limit=limit,
        include_superseded=include_superseded,
        meaning=lambda asked, ids: _meaning(asked, ids, vis),
        like=lambda asked, first: _like(asked, vis, w.vector_k, first),
    )
    packets = [packet(r.row, trust=r.trust, score=r.score) for r in ranked]
    if why:
        reasons = why_line.explain(ranked, terms, vis)
        for p in packets:
            p["why"] = reasons[p["id"]]
    return packets
