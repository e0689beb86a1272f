"""Recall's word index on PostgreSQL: the twin of the FTS5 queries in memory/recall.py.

Migration 0013 gives memory_node a generated `body_tsv` (to_tsvector('english', body): English
stemming, like FTS5's porter tokenizer) with a GIN index. A query is an OR of its terms, each
through plainto_tsquery (so operators and punctuation in a query are only text, as the quoted
FTS5 terms are), ranked by ts_rank_cd with length normalisation 1 (rank / (1 + log(length))):
cover density rewards terms close together and, like bm25, a long document does not win by
length alone. Recall divides each list by its best score, so only the order matters.

Differences from FTS5 that a user may see: English stop words are not indexed (FTS5 indexes
every word; recall drops its own function words before either), and diacritics are kept
(unaccent is not immutable, so it cannot feed a generated column).

Scripts without spaces (Chinese, Japanese, Thai) have no words for either index to split on:
`substring_candidates` matches the raw text, through pg_trgm's GIN index on body when the
extension could be created (migration 0013), by a sequential scan otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

from memory.chunks import like_containing

CONFIG = "english"


def _or_query(terms: Sequence[str]) -> tuple[str, list[str]]:
    sql = " || ".join([f"plainto_tsquery('{CONFIG}', %s)"] * len(terms))
    return f"({sql})", list(terms)


def holds(term: str) -> tuple[str, list[str]]:
    """A clause (over alias n) true of the nodes whose body holds `term`, and its parameters."""
    query, params = _or_query([term])
    return f"n.body_tsv @@ {query}", params


def candidates(
    terms: Sequence[str], where: str, where_params: Sequence[Any], k: int
) -> list[tuple[int, float]]:
    """(id, relevance) best first for nodes holding any of `terms` and meeting `where` (a
    visibility clause over alias n)."""
    if not terms:
        return []
    query, params = _or_query(terms)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT n.id, ts_rank_cd(n.body_tsv, q.q, 1) AS r FROM memory_node n, "
            f"(SELECT {query} AS q) AS q WHERE n.body_tsv @@ q.q AND {where} "
            "ORDER BY r DESC, n.id LIMIT %s",
            [*params, *where_params, k],
        )
        return [(node_id, float(rank)) for node_id, rank in cursor.fetchall()]


def matching(terms: Sequence[str], where: str, where_params: Sequence[Any], k: int) -> list[int]:
    """Up to k ids of nodes holding any of `terms` and meeting `where`, unranked (a count)."""
    query, params = _or_query(terms)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT n.id FROM memory_node n WHERE n.body_tsv @@ {query} AND {where} LIMIT %s",
            [*params, *where_params, k],
        )
        return [row[0] for row in cursor.fetchall()]


def substring_candidates(
    text: str, where: str, where_params: Sequence[Any], k: int
) -> list[tuple[int, float]]:
    """(id, 1.0) for nodes whose body holds `text` verbatim (LIKE, wildcards escaped), newest
    first; pg_trgm's index serves it for three characters or more."""
    if not text:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT n.id FROM memory_node n WHERE n.body LIKE %s AND {where} "
            "ORDER BY n.id DESC LIMIT %s",
            [like_containing(text), *where_params, k],
        )
        return [(row[0], 1.0) for row in cursor.fetchall()]


def matched_terms(node_ids: Sequence[int], terms: Sequence[str]) -> dict[int, list[str]]:
    """Which of `terms` each node's body holds, as the tsvector sees it (stemmed)."""
    found: dict[int, list[str]] = {}
    marks = ",".join(["%s"] * len(node_ids))
    with connection.cursor() as cursor:
        for term in terms:
            query, params = _or_query([term])
            cursor.execute(
                f"SELECT id FROM memory_node WHERE body_tsv @@ {query} AND id IN ({marks})",
                [*params, *node_ids],
            )
            for (node_id,) in cursor.fetchall():
                found.setdefault(node_id, []).append(term)
    return found


def has_trigram_index() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'memory_node_body_trgm'")
        return cursor.fetchone() is not None
