"""Recall: find what the graph holds about a query, and hand back previews, never bodies.

Ranking (DESIGN.md, Recall and read) is a score-normalised fusion of three lists, each computed
only over what the caller may see (domains, scope, created by as_of):
  1. FTS5 bm25 over an OR of the query's content words (porter-stemmed by the index);
  2. cosine similarity against an in-process matrix of the current embedder's vectors;
  3. a one-hop expansion over edges whose both endpoints are live, from the best fused seeds
     (adjacent turns of a conversation often hold the evidence a question points at).
The fused score is multiplied by the recency weight of the event clock (memory.clocks).
Decay, trust (sealed, rejected, superseded) and as-of liveness are checked for candidates only.
"""

from __future__ import annotations

import functools
import re
import threading
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.utils import timezone
from threadpoolctl import ThreadpoolController

from memory import fts_pg
from memory.clocks import recency_weight
from memory.embed import get_embedder
from memory.errors import Invalid
from memory.models import RecallLog
from memory.visibility import Visibility, db_time, lawful_trust, live_at

EXCERPT_CHARS = 240
MAX_LIMIT = 100
# How many candidates each list contributes before fusion.
FTS_CANDIDATES = 100
VECTOR_CANDIDATES = 100
# Below this cosine, similarity is projection noise (random 256-d projections of unrelated
# texts scatter around 0 with a spread of about 1/sqrt(256) = 0.06), not meaning.
VECTOR_MIN_SIMILARITY = 0.15
# Fusion: each list's scores divided by its best (so both lie in [0, 1]), then a weighted sum.
# Weights were chosen on LoCoMo dev (docs/benchmarks.md): score-normalised fusion beat
# reciprocal-rank fusion (R@10 0.707 vs 0.676), and the default hashing embedder only helps as a
# tie-breaker (its weight at 0.3 cost 0.07 R@10); a stronger embedder deserves a larger weight.
W_FTS = 1.0
W_VECTOR = 0.1
# A neighbour of a strong hit inherits half its score times this weight (adjacent turns of a
# conversation often hold the evidence: +0.07 R@10 on LoCoMo dev).
W_NEIGHBOUR = 1.0
EXPANSION_SEEDS = 10
# Expansion follows edges between peers (a reply, a citation, an answer), not provenance:
# derived_from leads to a parent shared by hundreds of children (a session, a file), a hub that
# every seed would lift to the top without being about the query.
EXPANSION_EDGE_KINDS = (
    "responds_to",
    "cites",
    "answers",
    "asks_about",
    "reopens",
    "similar",
    "consolidated_into",
    "feeds",
)
# A query naming the node's signer (a speaker in a transcript) is evidence the node is about
# them: the score doubles (+0.1 R@10 on LoCoMo dev, where questions name the speaker).
SIGNER_BOOST = 1.0

# Function words carry no topic; dropping them turns an OR-query from "anything with 'the'"
# into "anything about the subject". Kept short on purpose: content words must survive.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren as at be because been before
    being below between both but by can could couldn did didn do does doesn doing don down during
    each few for from further had hadn has hasn have haven having he her here hers herself him
    himself his how i if in into is isn it its itself just ll me might more most my myself no nor
    not now of off on once only or other our ours ourselves out over own re s same shan she should
    shouldn so some such t than that the their theirs them themselves then there these they this
    those through to too under until up very was wasn we were weren what when where which while
    who whom why will with won would wouldn you your yours yourself yourselves d m o ve y ma
    also did does ever kind much many get got like likely would something anything things thing
    yes hey oh""".split()  # noqa: SIM905 (a word list reads better as text)
)
_WORD = re.compile(r"\w+", re.UNICODE)


def query_terms(query: str) -> list[str]:
    """The query's searchable words: Unicode word characters, casefolded, function words dropped
    (unless nothing else is left), de-duplicated in order. Punctuation and FTS5 operators never
    reach the index as syntax: every term is quoted when the MATCH expression is built."""
    text = unicodedata.normalize("NFKC", query or "").casefold()
    words = [w.strip("_") for w in _WORD.findall(text)]
    words = [w for w in words if w]
    content = [w for w in words if w not in STOPWORDS]
    return list(dict.fromkeys(content or words))


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 MATCH string: each term a quoted string (so `AND`, `*`, `:` and `"` are just
    text), joined by OR so a document need not hold every word to be found."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


# --- the vector matrix, cached per process -------------------------------------------------


@dataclass
class _Matrix:
    key: tuple[str, str]
    dim: int
    last: tuple[int, int, str] | None = None  # (vector id, node id, created_at) of the last row
    n: int = 0
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 1), dtype=np.float32))
    domain_codes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    wild: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    created: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    domains: dict[str, int] = field(default_factory=dict)


_matrices: dict[tuple[str, str], _Matrix] = {}
_matrix_lock = threading.Lock()


def _epoch(value: Any) -> float:
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def vector_matrix() -> _Matrix:
    """The current embedder's vectors with the immutable columns used for filtering, refreshed
    by appending rows with a larger Vector id. Vectors are never updated in place; a mismatch
    of the last cached row (a rolled-back or replaced database) rebuilds it from scratch.
    Rows of another dimension are skipped: models never mix."""
    embedder = get_embedder()
    key = (str(connection.settings_dict["NAME"]), embedder.name)
    with _matrix_lock:
        cache = _matrices.get(key)
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
                cache = _Matrix(key=key, dim=embedder.dim)
                cache.vectors = np.zeros((0, embedder.dim), dtype=np.float32)
                _matrices[key] = cache
            last_id = cache.last[0] if cache.last else 0
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


def _reserve(cache: _Matrix, need: int) -> None:
    if need > len(cache.ids):
        capacity = max(need, int(len(cache.ids) * 1.25) + 1024)
        cache.ids = np.resize(cache.ids, capacity)
        cache.domain_codes = np.resize(cache.domain_codes, capacity)
        cache.wild = np.resize(cache.wild, capacity)
        cache.created = np.resize(cache.created, capacity)
        grown = np.zeros((capacity, cache.dim), dtype=np.float32)
        grown[: cache.n] = cache.vectors[: cache.n]
        cache.vectors = grown


def _append(cache: _Matrix, rows: list[tuple]) -> None:
    # A blob of the wrong length (edited in the file) is skipped, not reshaped into a crash;
    # integrity's vectors_of_wrong_dimension names it.
    rows = [r for r in rows if len(r[3]) == cache.dim * 4]
    count = len(rows)
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
    cache.created[cache.n : end] = [_epoch(r[6]) for r in rows]
    cache.n = end
    last = rows[-1]
    cache.last = (last[0], last[1], str(last[2]))


@functools.cache
def _blas() -> ThreadpoolController:
    # Discovering the loaded BLAS libraries once; each query then only sets a thread count.
    return ThreadpoolController()


def _vector_candidates(query: str, vis: Visibility, k: int) -> list[tuple[int, float]]:
    matrix = vector_matrix()
    if matrix.n == 0:
        return []
    q = get_embedder().embed([query])[0]
    if not np.any(q):
        return []
    # One thread: a matrix-vector product is memory-bound, and waking BLAS's worker threads
    # for every query cost more than they saved (bench, 10k nodes: p50 16 ms -> 4 ms).
    with _blas().limit(limits=1, user_api="blas"):
        scores = matrix.vectors[: matrix.n] @ q
    mask = None
    if vis.domains is not None:
        codes = [matrix.domains[d] for d in vis.domains if d in matrix.domains]
        mask = np.isin(matrix.domain_codes[: matrix.n], codes)
    if vis.scope != "both":
        wild = matrix.wild[: matrix.n] if vis.scope == "wild" else ~matrix.wild[: matrix.n]
        mask = wild if mask is None else mask & wild
    if vis.as_of is not None:
        then = matrix.created[: matrix.n] <= vis.as_of.timestamp()
        mask = then if mask is None else mask & then
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    k = min(k, matrix.n)
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top])]
    return [
        (int(matrix.ids[i]), float(scores[i]))
        for i in top
        if np.isfinite(scores[i]) and scores[i] >= VECTOR_MIN_SIMILARITY
    ]


# --- the lists ------------------------------------------------------------------------------


# Terms in more than this share of documents are dropped from the OR (unless nothing rarer is
# left): their bm25 idf is near zero, yet scoring their long posting lists is most of the cost.
COMMON_TERM_SHARE = 0.1
_df_cache: dict[tuple[str, str], tuple[int, int]] = {}


def _common_threshold(total: int) -> int:
    return max(int(total * COMMON_TERM_SHARE), 50)


def _document_frequencies(terms: Sequence[str]) -> tuple[dict[str, int], int]:
    """Per-term document counts, capped just past the common threshold (cached until the index
    grows by a tenth), and the total (max node id: an upper bound, cheap to read)."""
    db = str(connection.settings_dict["NAME"])
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(id) FROM memory_node")
        total = cursor.fetchone()[0] or 0
        found: dict[str, int] = {}
        for term in terms:
            cached = _df_cache.get((db, term))
            if cached is not None and cached[1] * 1.1 >= total:
                found[term] = cached[0]
                continue
            # Counting stops past the threshold: only "is it common?" matters, and a common
            # term's full posting list is exactly what this avoids reading.
            if connection.vendor == "postgresql":
                found[term] = fts_pg.document_count(term, cap=_common_threshold(total) + 1)
            else:
                cursor.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM memory_node_fts WHERE memory_node_fts "
                    "MATCH %s LIMIT %s)",
                    [match_expression([term]), _common_threshold(total) + 1],
                )
                found[term] = cursor.fetchone()[0]
            _df_cache[(db, term)] = (found[term], total)
    return found, total


def selective_terms(terms: Sequence[str]) -> list[str]:
    """The terms worth scoring: those in at most COMMON_TERM_SHARE of documents, else the two
    rarest (a query of only common words still finds something)."""
    if len(terms) <= 1:
        return list(terms)
    df, total = _document_frequencies(terms)
    rare = [t for t in terms if 0 < df[t] <= _common_threshold(total)]
    if rare:
        return rare
    present = sorted((t for t in terms if df[t]), key=df.__getitem__)
    return present[:2]


def _fts_candidates(terms: Sequence[str], vis: Visibility, k: int) -> list[tuple[int, float]]:
    """(id, relevance) best first; relevance = -bm25 (FTS5's bm25 is lower-is-better)."""
    terms = selective_terms(terms)
    if not terms:
        return []
    where, params = vis.sql("n")
    if connection.vendor == "postgresql":
        return fts_pg.candidates(terms, where, params, k)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT n.id, -bm25(memory_node_fts) AS r FROM memory_node_fts f "
            "JOIN memory_node n ON n.id = f.rowid "
            f"WHERE memory_node_fts MATCH %s AND {where} ORDER BY r DESC LIMIT %s",
            [match_expression(terms), *params, k],
        )
        return cursor.fetchall()


def _neighbours(seeds: Sequence[int], vis: Visibility) -> dict[int, list[int]]:
    """Seed -> its one-hop neighbours over edges existing by as_of, inside the visibility."""
    if not seeds:
        return {}
    where, params = vis.sql("n")
    marks = ",".join(["%s"] * len(seeds))
    edge_time = ""
    edge_params: list[Any] = []
    if vis.as_of is not None:
        edge_time = "AND e.created_at <= %s"
        edge_params = [db_time(vis.as_of)]
    kinds = f"AND e.kind IN ({','.join(repr(k) for k in EXPANSION_EDGE_KINDS)})"
    sql = (
        "SELECT e.from_node_id, e.to_node_id FROM memory_edge e JOIN memory_node n "
        f"ON n.id = e.to_node_id WHERE e.from_node_id IN ({marks}) {kinds} {edge_time} "
        f"AND {where} UNION ALL SELECT e.to_node_id, e.from_node_id FROM memory_edge e "
        f"JOIN memory_node n ON n.id = e.from_node_id WHERE e.to_node_id IN ({marks}) {kinds} "
        f"{edge_time} AND {where}"
    )
    found: dict[int, list[int]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, [*seeds, *edge_params, *params, *seeds, *edge_params, *params])
        for seed, other in cursor.fetchall():
            found.setdefault(seed, []).append(other)
    return found


def preview_rows(node_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    if not node_ids:
        return {}
    marks = ",".join(["%s"] * len(node_ids))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, jurisdiction, kind, substr(body, 1, %s), source, domain, signature, "
            f"COALESCE(referent_time, created_at) FROM memory_node WHERE id IN ({marks})",
            [EXCERPT_CHARS + 1, *node_ids],
        )
        keys = ("id", "jurisdiction", "kind", "body", "source", "domain", "signature", "when")
        return {row[0]: dict(zip(keys, row, strict=True)) for row in cursor.fetchall()}


def excerpt_of(text: str) -> str:
    """A bounded preview: at most EXCERPT_CHARS characters, an ellipsis when cut."""
    text = " ".join(text.split())
    if len(text) <= EXCERPT_CHARS:
        return text
    return text[: EXCERPT_CHARS - 1].rstrip() + "…"


def packet(row: dict[str, Any], *, trust: str, score: float | None = None) -> dict[str, Any]:
    """A preview: jurisdiction first (why it is here), never the body."""
    result: dict[str, Any] = {
        "jurisdiction": row["jurisdiction"],
        "id": row["id"],
        "trust": trust,
        "kind": row["kind"],
        "excerpt": excerpt_of(row["body"]),
        "source": row["source"],
    }
    if score is not None:
        result["score"] = round(float(score), 6)
    return result


def _event_time(value: Any) -> datetime | None:
    if value is None:
        return None
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def recall(
    query: str,
    *,
    scope: str = "home",
    domains: Iterable[str] | None = None,
    limit: int = 10,
    as_of: str | datetime | None = None,
    include_superseded: bool = False,
    actor: str = "owner",
) -> list[dict[str, Any]]:
    """Ranked previews of what the caller may see about `query`; logs a RecallLog row.

    Reads the event clock (recency weight, COALESCE(referent_time, created_at)) and, for as_of,
    the store clock (created_at <= T) and the audit log's clock (Event.at <= T). Never counts as
    an access. Excludes decayed nodes and nodes whose trust is sealed or rejected; superseded
    only when include_superseded, labelled. Refuses (Invalid) an unknown scope, a limit outside
    1..100 and a naive or unparseable as_of. A query with no words returns [] (still logged).
    """
    started = time.perf_counter()
    if not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise Invalid(f"limit must be between 1 and {MAX_LIMIT}", code="bad_limit")
    vis = Visibility.of(domains=domains, scope=scope, as_of=as_of)
    query = query if isinstance(query, str) else ""
    terms = query_terms(query)
    results: list[dict[str, Any]] = []
    if terms:
        results = _rank(query, terms, vis, limit=limit, include_superseded=include_superseded)
    took_ms = (time.perf_counter() - started) * 1000
    with transaction.atomic():
        RecallLog.objects.create(
            actor=actor or "owner",
            query=query[:2000],
            scope=scope,
            domains=list(vis.domains) if vis.domains is not None else ["*"],
            as_of=vis.as_of,
            result_ids=[p["id"] for p in results],
            took_ms=round(took_ms, 3),
        )
    return results


def _rank(
    query: str, terms: list[str], vis: Visibility, *, limit: int, include_superseded: bool
) -> list[dict[str, Any]]:
    scores: dict[int, float] = {}
    for weight, hits in (
        (W_FTS, _fts_candidates(terms, vis, FTS_CANDIDATES)),
        (W_VECTOR, _vector_candidates(query, vis, VECTOR_CANDIDATES) if W_VECTOR else []),
    ):
        top = max((value for _, value in hits), default=0.0)
        for node_id, value in hits:
            if top > 0:
                scores[node_id] = scores.get(node_id, 0.0) + weight * value / top
    if not scores:
        return []
    # Liveness and trust (now or as of T) before expansion, so a decayed, sealed or rejected
    # node neither ranks nor bridges to its neighbours.
    alive = live_at(scores, as_of=vis.as_of)
    trusts = lawful_trust(alive, as_of=vis.as_of, include_superseded=include_superseded)
    scores = {i: s for i, s in scores.items() if i in trusts}
    seeds = sorted(scores, key=scores.__getitem__, reverse=True)[:EXPANSION_SEEDS]
    neighbours = _neighbours(seeds, vis)
    reached = {n for ns in neighbours.values() for n in ns} - set(trusts)
    if reached:
        alive = live_at(reached, as_of=vis.as_of) if vis.as_of is not None else reached
        trusts.update(lawful_trust(alive, as_of=vis.as_of, include_superseded=include_superseded))
    # A neighbour inherits from its best seed (max, not sum: many weak seeds are no evidence).
    lifted: dict[int, float] = {}
    for seed in seeds:
        for other in neighbours.get(seed, ()):
            if other in trusts:
                lifted[other] = max(lifted.get(other, 0.0), W_NEIGHBOUR * scores[seed] / 2)
    for other, gain in lifted.items():
        scores[other] = scores.get(other, 0.0) + gain
    ordered = sorted(scores, key=scores.__getitem__, reverse=True)[: max(limit * 3, 30)]
    rows = preview_rows(ordered)
    now = vis.as_of or timezone.now()
    term_set = set(terms)
    for node_id, row in rows.items():
        weight = recency_weight(_event_time(row["when"]), now=now)
        signer = set(query_terms(row["signature"]))
        boost = 1.0 + (SIGNER_BOOST if signer and signer <= term_set else 0.0)
        scores[node_id] *= weight * boost
    ordered = sorted(rows, key=scores.__getitem__, reverse=True)[:limit]
    return [packet(rows[i], trust=trusts[i], score=scores[i]) for i in ordered]
