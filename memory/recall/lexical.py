"""The word lists of recall: query words, the FTS5 word index (bm25) and its common-term cut.

Every term is quoted when the MATCH expression is built, so punctuation and FTS5 operators in a
query never reach the index as syntax.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection

from memory.chunks import chunks
from memory.models import EventKind
from memory.recall import fts_pg
from memory.visibility import Visibility, lawful_trust

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
# Terms in more than this share of the caller's documents are dropped from the OR (unless
# nothing rarer is left): their bm25 idf is near zero, yet scoring their long posting lists is
# most of the cost.
COMMON_TERM_SHARE = 0.1
# Scoring is bm25 over every document holding a scored term, so its cost is their number: terms
# are scored rarest first while the caller's documents holding them add up to this, and a query
# whose rarest term alone passes it scores that term's newest documents only (recency weighs in
# later anyway).
FTS_POSTINGS_BUDGET = 10_000
# The word list is ranked unjoined, this many per wanted candidate, then filtered by visibility;
# when fewer than wanted pass, it is ranked again joined to the nodes (exact either way).
UNJOINED_FETCH = 4


def query_terms(query: str) -> list[str]:
    """The query's searchable words: Unicode word characters, casefolded, function words dropped
    (unless nothing else is left), de-duplicated in order. Punctuation and FTS5 operators never
    reach the index as syntax: every term is quoted when the MATCH expression is built."""
    words = _words(unicodedata.normalize("NFKC", query or ""))
    content = [w for w in words if w not in STOPWORDS]
    return list(dict.fromkeys(content or words))


def word_spans(text: str) -> list[tuple[int, int, list[str]]]:
    """Each word of `text` (already NFKC-normalised) as (start, end, the query words
    query_terms reads in it, stopwords kept): casefolding may split one word in two."""
    return [(m.start(), m.end(), _words(m.group())) for m in _WORD.finditer(text)]


def _words(text: str) -> list[str]:
    return [w for w in (w.strip("_") for w in _WORD.findall(text.casefold())) if w]


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 MATCH string: each term a quoted string (so `AND`, `*`, `:` and `"` are just
    text), joined by OR so a document need not hold every word to be found."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _common_threshold(total: int) -> int:
    return max(int(total * COMMON_TERM_SHARE), 50)


def _count_cap(total: int) -> int:
    # Past both cuts the exact count changes nothing.
    return max(_common_threshold(total), FTS_POSTINGS_BUDGET) + 1


@dataclass(frozen=True)
class Counts:
    """What every cut and every idf counts, over the documents the caller may see (vis.sql,
    neither sealed nor rejected): per term, how many hold it (exact up to `cap`: past both cuts
    the exact count changes nothing, and a common term's whole posting list is what the cut
    avoids reading); how many the caller may see; and the hidden ids inside vis.sql."""

    df: dict[str, int]
    total: int
    cap: int
    hidden: frozenset[int]


def _hidden(where: str, params: list[Any], vis: Visibility) -> frozenset[int]:
    """The nodes inside `where` that lawful_trust hides. Only a node ever sealed or rejected can
    be hidden, so only those are asked about (few: one indexed read of the log by kind)."""
    kinds = [EventKind.SEALED.value, EventKind.REJECTED.value]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT e.node_id FROM memory_event e JOIN memory_node n ON n.id = e.node_id "
            f"WHERE e.kind IN (%s, %s) AND {where}",
            [*kinds, *params],
        )
        ever = [row[0] for row in cursor.fetchall()]
    shown = lawful_trust(ever, as_of=vis.as_of, include_superseded=True)
    return frozenset(ever) - shown.keys()


def _visible_count(
    term: str, where: str, params: list[Any], hidden: frozenset[int], limit: int | None
) -> int:
    """How many documents inside `where`, and not `hidden`, hold `term`: exact up to `limit`
    (None: all). Counted in the database, the ids never read out."""
    if connection.vendor == "postgresql":
        holds, bound = fts_pg.holds(term)
        inside = f"SELECT n.id AS id FROM memory_node n WHERE {holds} AND {where}"
    else:
        holds, bound = "memory_node_fts MATCH %s", [match_expression([term])]
        inside = (
            "SELECT f.rowid AS id FROM memory_node_fts f CROSS JOIN memory_node n "
            f"ON n.id = f.rowid WHERE {holds} AND {where}"
        )
    with connection.cursor() as cursor:
        if limit is None:
            cursor.execute(f"SELECT count(*) FROM ({inside}) AS hits", [*bound, *params])
        else:
            cursor.execute(
                f"SELECT count(*) FROM ({inside} LIMIT %s) AS hits",
                [*bound, *params, limit + len(hidden)],
            )
        count: int = cursor.fetchone()[0]
        if limit is not None and count >= limit + len(hidden):
            return limit  # it stopped early: at least `limit` of them are visible
        for piece in chunks(sorted(hidden)):  # the count was complete: take the hidden off
            marks = ",".join(["%s"] * len(piece))
            cursor.execute(
                f"SELECT count(*) FROM ({inside}) AS hits WHERE hits.id IN ({marks})",
                [*bound, *params, *piece],
            )
            count -= cursor.fetchone()[0]
    return count if limit is None else min(count, limit)


def document_frequencies(terms: Sequence[str], vis: Visibility) -> Counts:
    """Counts (above) for these terms under `vis`: fresh on every call, so a seal or a rejection
    moves them at once (a cache would lag it)."""
    where, params = vis.sql("n")
    hidden = _hidden(where, params, vis)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM memory_node n WHERE {where}", params)
        total = max(cursor.fetchone()[0] - len(hidden), 0)
    cap = _count_cap(total)
    df = {}
    for term in terms:
        df[term] = _visible_count(term, where, params, hidden, cap)
    return Counts(df=df, total=total, cap=cap, hidden=hidden)


def _scorable(terms: Sequence[str], df: dict[str, int], total: int) -> list[str]:
    """The terms in at most COMMON_TERM_SHARE of the caller's documents, rarest first; else the
    two rarest (a query of only common words still finds something)."""
    if len(terms) <= 1:
        return list(terms)
    rare = sorted((t for t in terms if 0 < df[t] <= _common_threshold(total)), key=df.__getitem__)
    return rare or sorted((t for t in terms if df[t]), key=df.__getitem__)[:2]


def _selective(terms: Sequence[str], scorable: list[str], df: dict[str, int]) -> list[str]:
    if len(scorable) <= 1:
        return scorable
    kept: list[str] = []
    postings = 0
    for term in scorable:
        if kept and postings + df[term] > FTS_POSTINGS_BUDGET:
            break
        kept.append(term)
        postings += df[term]
    return [t for t in terms if t in kept]


def selective_terms(terms: Sequence[str], vis: Visibility) -> list[str]:
    """The terms worth scoring, in the query's order: the scorable ones, rarest first while
    the caller's documents holding them add up to at most FTS_POSTINGS_BUDGET (the rarest is
    always kept)."""
    if len(terms) <= 1:
        return list(terms)
    counts = document_frequencies(terms, vis)
    return _selective(terms, _scorable(terms, counts.df, counts.total), counts.df)


def _window(match: str, where: str, params: list[Any], hidden: frozenset[int]) -> int:
    """The lowest node id worth scoring: that of the caller's FTS_POSTINGS_BUDGET-th newest
    match, 0 when there are fewer (the doclists are walked backwards by rowid and stop there:
    this costs the budget, not the whole lists, and no bm25). Counted over what the caller may
    see: another domain's newer matches must not push the caller's own out of the window."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT f.rowid FROM memory_node_fts f CROSS JOIN memory_node n ON n.id = f.rowid "
            f"WHERE memory_node_fts MATCH %s AND {where} ORDER BY f.rowid DESC LIMIT %s",
            [match, *params, FTS_POSTINGS_BUDGET + len(hidden)],
        )
        newest = [row[0] for row in cursor.fetchall() if row[0] not in hidden]
    return newest[FTS_POSTINGS_BUDGET - 1] if len(newest) >= FTS_POSTINGS_BUDGET else 0


def fts_candidates(terms: Sequence[str], vis: Visibility, k: int) -> list[tuple[int, float]]:
    """(id, relevance) best first; relevance is bm25 (higher is better) with each term weighed
    by its idf over what the caller may see: the best k the caller may see. The selective
    terms' documents are scored, only the newest FTS_POSTINGS_BUDGET of them when there are
    more; when that left terms out, the documents holding every scorable term are scored too
    (few, and cheap to find: FTS5 intersects by seeking). Both lists weigh each term the same,
    so their scores are one scale: a document holding every term scores the same in both."""
    # One count per term (and one of the caller's documents) serves every cut and every idf.
    counts = document_frequencies(terms, vis)
    df = counts.df
    scorable = _scorable(terms, df, counts.total)
    chosen = _selective(terms, scorable, df)
    if not chosen:
        return []
    where, params = vis.sql("n")
    if connection.vendor == "postgresql":  # ts_rank_cd over every scorable term, as before
        return fts_pg.candidates(scorable, where, params, k)
    weights = scope_weights(scorable, vis, counts)
    match = match_expression(chosen)
    hidden = counts.hidden
    over = sum(df[t] for t in chosen) > FTS_POSTINGS_BUDGET
    floor = _window(match, where, params, hidden) if over else 0
    hits = _ranked({t: weights[t] for t in chosen}, floor, where, params, k, every=False)
    if len(scorable) > 1 and (floor or len(scorable) > len(chosen)):
        every = " AND ".join(f"({match_expression([t])})" for t in scorable)
        best = dict(hits)
        floor = _window(every, where, params, hidden)
        for node_id, score in _ranked(weights, floor, where, params, k, every=True):
            best[node_id] = max(score, best.get(node_id, score))
        hits = sorted(best.items(), key=lambda hit: -hit[1])[:k]
    return hits


def fts_matching(terms: Sequence[str], vis: Visibility, k: int) -> list[int]:
    """Up to k ids of documents the visibility clauses of `vis` pass that hold any of the terms
    worth scoring (as fts_candidates chooses them, from the caller's own counts), unranked: for
    a count, which needs no bm25 (most of a scored search's cost). Trust is the caller's to
    judge (lawful)."""
    counts = document_frequencies(terms, vis)  # the caller's counts: the cut ranking makes
    scorable = _scorable(terms, counts.df, counts.total)
    if not scorable:
        return []
    where, params = vis.sql("n")
    if connection.vendor == "postgresql":
        return fts_pg.matching(scorable, where, params, k)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT f.rowid FROM memory_node_fts f JOIN memory_node n ON n.id = f.rowid "
            f"WHERE memory_node_fts MATCH %s AND {where} LIMIT %s",
            [match_expression(scorable), *params, k],
        )
        return [row[0] for row in cursor.fetchall()]


def _indexed_rows() -> int:
    """The number of rows bm25 counts (nRow): the first varint of FTS5's averages record (row
    1 of memory_node_fts_data), read rather than counted (a count scans every row)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT block FROM memory_node_fts_data WHERE id = 1")
        row = cursor.fetchone()
    if not row or not row[0]:
        return 0
    value = 0
    for i, byte in enumerate(bytes(row[0])[:9]):  # SQLite's varint: big-endian, 7 bits a byte
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return value


def _idf(hits: int, rows: int) -> float:
    """FTS5's bm25 idf (fts5_aux.c): log((N - n + 0.5) / (n + 0.5)), floored at 1e-6."""
    idf = math.log((rows - hits + 0.5) / (hits + 0.5)) if rows else 0.0
    return idf if idf > 0 else 1e-6


def scope_weights(terms: Sequence[str], vis: Visibility, counts: Counts) -> dict[str, float]:
    """Per term, what turns FTS5's bm25 of that term into bm25 with the term's idf counted over
    the documents the caller may see (`counts`, never a sealed or rejected one):
    idf(visible count, visible documents) / idf(whole-index count, index rows).
    FTS5 counts its idf over the whole index, so another domain's (or a sealed or rejected
    node's) words, or its number of documents, would move a caller's scores; weighed by this,
    they move none. The counts are exact and fresh (a cached one could lag a seal); a term
    counted only up to the cap (a query of only common words) is counted whole here. The
    average length FTS5 normalises by stays the whole index's (docs/DESIGN.md, Recall and read:
    what it can move, and its bound)."""
    rows = _indexed_rows()
    where, params = vis.sql("n")
    weights: dict[str, float] = {}
    with connection.cursor() as cursor:
        for term in terms:
            cursor.execute(
                "SELECT count(*) FROM memory_node_fts WHERE memory_node_fts MATCH %s",
                [match_expression([term])],
            )
            everywhere = cursor.fetchone()[0]
            seen = counts.df[term]
            if seen >= counts.cap:
                seen = _visible_count(term, where, params, counts.hidden, None)
            weights[term] = _idf(seen, counts.total) / _idf(everywhere, rows)
    return weights


def _ranked(
    weights: dict[str, float],
    floor: int,
    where: str,
    params: list[Any],
    k: int,
    *,
    every: bool,
) -> list[tuple[int, float]]:
    """The best k visible documents holding any of the weighed terms (all of them when
    `every`), from node id `floor` on, by the sum of each term's weighed bm25."""
    window = "AND rowid >= %s " if floor else ""
    parts: list[str] = []
    bound: list[Any] = []
    for term, weight in weights.items():
        parts.append(
            "SELECT rowid AS id, -bm25(memory_node_fts) * %s AS r FROM memory_node_fts "
            f"WHERE memory_node_fts MATCH %s {window}"
        )
        bound += [weight, match_expression([term]), *([floor] if floor else [])]
    having = f"HAVING count(*) = {len(weights)} " if every else ""
    # LIMIT -1 keeps SQLite from flattening the terms' rows into the sum (bm25 may not run
    # inside an aggregate).
    terms_sql = " UNION ALL ".join(parts)
    scored_sql = f"SELECT id, sum(r) AS s FROM ({terms_sql} LIMIT -1) GROUP BY id {having}"
    fetch = k * UNJOINED_FETCH
    with connection.cursor() as cursor:
        # Scored in the word index alone, then judged: joining every match to memory_node for
        # visibility cost more than bm25 itself at 1M (a random lookup a match).
        cursor.execute(f"{scored_sql}ORDER BY s DESC LIMIT %s", [*bound, fetch])
        ranked = cursor.fetchall()
        if not ranked:
            return []
        # The best first: when k of them pass (the usual case), the rest need no lookup.
        head = k + k // 2
        visible = _visible(ranked[:head], where, params)
        if len(visible) < k:
            visible += _visible(ranked[head:], where, params)
        if len(visible) >= k or len(ranked) < fetch:
            return visible[:k]
        # A selective filter (a domain, a scope) left too few of the best: score within it.
        cursor.execute(
            f"SELECT g.id, g.s FROM ({scored_sql}) g JOIN memory_node n ON n.id = g.id "
            f"WHERE {where} ORDER BY g.s DESC LIMIT %s",
            [*bound, *params, k],
        )
        scored: list[tuple[int, float]] = cursor.fetchall()
        return scored


def _visible(
    ranked: list[tuple[int, float]], where: str, params: list[Any]
) -> list[tuple[int, float]]:
    """The hits that pass the visibility clauses `where`, in their order."""
    if not ranked:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT n.id FROM memory_node n WHERE n.id IN ({','.join(['%s'] * len(ranked))}) "
            f"AND {where}",
            [*(i for i, _ in ranked), *params],
        )
        seen = {row[0] for row in cursor.fetchall()}
    return [(i, r) for i, r in ranked if i in seen]


# Scripts written without spaces (memory/migrations/0009_trigram.py indexes bodies holding them
# in memory_node_trigram): Han, kana, Hangul, Thai, Lao, Myanmar, Khmer.
_SPACELESS = re.compile(
    "[\u2e80-\u2fdf\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uac00-\ud7af\u1100-\u11ff\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff]+"
)
TRIGRAM_MAX_RUNS = 5


def spaceless_runs(query: str) -> list[str]:
    """The query's runs of spaceless-script characters, de-duplicated in order."""
    text = unicodedata.normalize("NFKC", query or "")
    return list(dict.fromkeys(_SPACELESS.findall(text)))[:TRIGRAM_MAX_RUNS]


def trigram_candidates(query: str, vis: Visibility, k: int) -> list[tuple[int, float]]:
    """(id, relevance) for substrings in scripts without spaces: runs of three characters or
    more through the trigram index (relevance -bm25), shorter runs by a scan of the trigram
    table's own rows only (relevance: matched runs per 100 characters of body, so a short
    note about 東京 outranks a long one that mentions it once)."""
    runs = spaceless_runs(query)
    if not runs:
        return []
    where, params = vis.sql("n")
    found: dict[int, float] = {}
    if connection.vendor == "postgresql":  # substrings through pg_trgm (memory/recall/fts_pg.py)
        for run in runs:
            found.update(fts_pg.substring_candidates(run, where, params, k))
        return list(found.items())[:k]
    long_runs = [r for r in runs if len(r) >= 3]
    short_runs = [r for r in runs if len(r) < 3]
    with connection.cursor() as cursor:
        if long_runs:
            cursor.execute(
                "SELECT n.id, -bm25(memory_node_trigram) FROM memory_node_trigram t "
                "CROSS JOIN memory_node n ON n.id = t.rowid "
                f"WHERE memory_node_trigram MATCH %s AND {where} "
                "ORDER BY bm25(memory_node_trigram) LIMIT %s",
                [match_expression(long_runs), *params, k],
            )
            found.update(cursor.fetchall())
        if short_runs:
            hits = " + ".join("(instr(t.body, %s) > 0)" for _ in short_runs)
            cursor.execute(
                f"SELECT n.id, ({hits}) * 100.0 / (100 + length(t.body)) AS r "
                "FROM memory_node_trigram t CROSS JOIN memory_node n ON n.id = t.rowid "
                f"WHERE ({hits}) > 0 AND {where} ORDER BY r DESC LIMIT %s",
                [*short_runs, *short_runs, *params, k],
            )
            for node_id, relevance in cursor.fetchall():
                found[node_id] = max(found.get(node_id, 0.0), relevance)
    return sorted(found.items(), key=lambda item: -item[1])


def matched_terms(node_ids: Sequence[int], terms: Sequence[str]) -> dict[int, list[str]]:
    """Which of `terms` each node's body holds, as the word index sees it (stemmed); one probe
    per term over these nodes only, so it costs nothing unless a caller asks why."""
    found: dict[int, list[str]] = {}
    if not node_ids:
        return found
    if connection.vendor == "postgresql":
        return fts_pg.matched_terms(node_ids, terms[:10])
    marks = ",".join(["%s"] * len(node_ids))
    with connection.cursor() as cursor:
        for term in terms[:10]:
            cursor.execute(
                f"SELECT rowid FROM memory_node_fts WHERE memory_node_fts MATCH %s "
                f"AND rowid IN ({marks})",
                [match_expression([term]), *node_ids],
            )
            for (node_id,) in cursor.fetchall():
                found.setdefault(node_id, []).append(term)
    return found
