"""Ranking: how recall's candidate lists become one ordered list (why each is there:
memory.recall.why).

Steps, each over what the caller may see:
  1. score-normalised fusion of the word list (bm25) and the vector list (cosine): each list's
     scores divided by its best, then a weighted sum; query words naming a signer of the best
     hits (a speaker) are searched apart at a lower weight (memory.recall.gather.speakers_named),
     and the vectors are asked the query without them (memory.recall.gather.without_names);
  2. liveness and trust (now or as of T), so a decayed, sealed or rejected node neither ranks
     nor bridges;
  3. pseudo-relevance feedback: words shared by the best hits, searched again;
  4. an expansion over edges between peers from the best seeds (one hop, and further turns
     along responds_to: memory.recall.gather.chain), and one through the entities (names, dates,
     quantities: memory.recall.entities) the seeds share with other nodes;
  5. recency weight (event clock) and the signer boost (memory.recall.boost);
  6. the session lift and diversity over the best POOL candidates (memory.recall.gather): a node
  whose
     parent (derived_from: a session, a file) holds other strong candidates gains; one whose
     parent already placed nodes above it gives way.
Every weight is a field of Weights; docs/recall.md says what each is and how it was chosen."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.utils import timezone

from memory.recall import gather, rerank
from memory.recall.boost import boost
from memory.recall.dates import date_candidates
from memory.recall.entities import shared as _entity_neighbours
from memory.recall.lexical import (
    fts_candidates,
    query_terms,
    spaceless_runs,
    trigram_candidates,
)
from memory.recall.why import reasons as _reasons
from memory.visibility import Visibility, db_time, lawful_trust

FTS_CANDIDATES = 100
# Candidates that get their rows read, the signer boost and the session lift: a fixed floor,
# so an agent's top 10 is the same whatever limit it asked for (with limit*3 alone, limit 10
# and limit 20 ordered LoCoMo's top 10 differently: R@10 0.756 against 0.766).
POOL = 60
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


@dataclass(frozen=True)
class Weights:
    """Recall's tunables (docs/recall.md: one line each on what it is and how it was chosen)."""

    fts: float = 1.0
    vector: float = 0.1
    vector_k: int = 100
    neighbour: float = 1.0
    signer: float = 2.0
    feedback: float = 0.0
    feedback_docs: int = 5
    feedback_terms: int = 5
    diversity: float = 0.0
    date: float = 0.3
    seeds: int = 10
    entity: float = 0.0
    entity_cap: int = 10
    reach: int = 2
    reach_decay: float = 0.5
    session: float = 0.0
    names: float = 0.25
    # The second step (memory.recall.gather.second_terms, recall's second-step search): the
    # first results' names and dates searched as words, and the nodes nearest in meaning to
    # the query with the first results; each list's weight, and how many first results.
    second_words: float = 0.0
    second_meaning: float = 0.0
    second_seeds: int = 3


WEIGHTS = Weights()


@contextlib.contextmanager
def using(**overrides: Any) -> Iterator[Weights]:
    """Rank with some weights changed for the duration (the bench's grid; tests)."""
    global WEIGHTS
    saved = WEIGHTS
    WEIGHTS = dataclasses.replace(saved, **overrides)
    try:
        yield WEIGHTS
    finally:
        WEIGHTS = saved


@dataclass
class Ranked:
    id: int
    score: float
    trust: str
    row: dict[str, Any]
    why: list[str] = field(default_factory=list)


def _add(scores: dict[int, float], hits: Sequence[tuple[int, float]], weight: float) -> None:
    top = max((value for _, value in hits), default=0.0)
    if top <= 0 or not weight:
        return
    for node_id, value in hits:
        scores[node_id] = scores.get(node_id, 0.0) + weight * value / top


def rank(
    query: str,
    terms: list[str],
    vis: Visibility,
    *,
    limit: int,
    include_superseded: bool,
    vectors: Callable[[str], Callable[[], Sequence[tuple[int, float]]]] | None = None,
    meaning: Callable[[str, list[int]], tuple[dict[int, float], dict[int, float]]] | None = None,
    like: Callable[[str, list[int]], Sequence[tuple[int, float]]] | None = None,
) -> list[Ranked]:
    """The best `limit` nodes for the query `terms`, each with its trust and preview row.
    Every read by meaning is asked the query without the speakers it names (the name-less
    query, memory.recall.gather.without_names): `vectors(text)` starts the vector list and
    returns the call that waits for it (recall.vector_search: the other word lists are read
    meanwhile); `meaning(text, ids)` gives its cosines to lawful nodes, alone and in context
    (memory.vectors.likeness.in_context), read for the pool when the reranker wants them;
    `like(text, ids)` the visible nodes nearest in meaning to it with those first results (the
    second step)."""
    w = WEIGHTS
    word_hits = fts_candidates(terms, vis, FTS_CANDIDATES)
    read: dict[int, dict[str, Any]] = {}  # preview rows already read (by _names)
    reranks = rerank.wanted()  # then the rows are read with their parents
    named = _names(terms, word_hits, vis, include_superseded, read, reranks) if w.names < 1 else []
    # With the name in, the turns nearest in meaning are those addressing the speaker ("Thanks,
    # Nate!"); the speaker's own turns are what the question asks about.
    asked = gather.without_names(query, named)
    waiting = vectors(asked) if vectors is not None else list
    # Substrings in scripts without spaces count as words (same weight, own normalisation).
    substring_hits = trigram_candidates(query, vis, FTS_CANDIDATES)
    scores: dict[int, float] = {}
    unnamed: list[tuple[int, float]] = []
    if named:
        # The query names a speaker: words without the name rank at full weight, with it at
        # WEIGHTS.names (the signer boost still reads the name).
        unnamed = fts_candidates([t for t in terms if t not in named], vis, FTS_CANDIDATES)
        _add(scores, unnamed, w.fts)
        _add(scores, word_hits, w.fts * w.names)
    else:
        _add(scores, word_hits, w.fts)
    _add(scores, substring_hits, w.fts)
    vector_hits = waiting()
    _add(scores, vector_hits, w.vector)
    dated = date_candidates(query, vis) if w.date else []
    _add(scores, dated, w.date)
    if not scores:
        return []
    trusts = _lawful(scores, vis, include_superseded)
    scores = {i: s for i, s in scores.items() if i in trusts}
    fed: tuple[list[str], set[int]] = ([], set())
    if w.feedback and scores:
        fed = _feedback(scores, terms, vis, trusts, include_superseded)
    seeds = sorted(scores, key=scores.__getitem__, reverse=True)[: w.seeds]
    via = _expand(seeds, scores, trusts, vis, include_superseded)
    through = _entity_expand(seeds, scores, trusts, vis, include_superseded) if w.entity else {}
    second = _second_step(scores, trusts, vis, include_superseded, asked, like)
    ordered = sorted(scores, key=scores.__getitem__, reverse=True)[: max(limit * 3, POOL)]
    now = vis.as_of or timezone.now()
    rows, boosted = boost(ordered, read, scores, terms, now=now, signer=w.signer, parents=reranks)
    # Ties go to the older node (lower id), whatever order the rows came back in.
    ordered = sorted(rows, key=lambda i: (-scores[i], i))
    if len(ordered) > 1 and reranks:
        likeness = context = None
        if meaning is not None and rerank.wants_meaning():
            likeness, context = meaning(asked, ordered)
        signals = rerank.signals(
            rows, words=word_hits, unnamed=unnamed, vector=vector_hits, date=dated, via=via,
            signer=boosted, named=bool(named), meaning=likeness, context=context,
        )  # fmt: skip
        ordered = rerank.reorder(ordered, scores, signals)
    chosen = _choose(ordered, scores, limit)
    lists = {
        "words": dict(word_hits),
        "substring": dict(substring_hits),
        "vector": dict(vector_hits),
        "date": dict(dated),
        "feedback": dict.fromkeys(fed[1], 0.0),
        "like the first results": second,
    }
    notes = {"substring": ", ".join(spaceless_runs(query)), "feedback": ", ".join(fed[0][:3])}
    return [
        Ranked(
            id=i,
            score=scores[i],
            trust=trusts[i],
            row=rows[i],
            why=_reasons(
                i,
                lists,
                notes,
                via,
                signer=i in boosted,
                entity=through.get(i),
            ),
        )
        for i in chosen
    ]


def _names(
    terms: list[str],
    hits: Sequence[tuple[int, float]],
    vis: Visibility,
    include_superseded: bool,
    read: dict[int, dict[str, Any]],
    parents: bool,
) -> list[str]:
    """Query words naming a signer of one of the word list's lawful best hits, when some
    other word is left to search. Lawfulness is asked only of hits whose signer is named (most
    queries name none, and pay one read of 20 rows, kept in `read` for rank's pool)."""
    from memory.packets import preview_rows

    if len(terms) < 2 or not hits:
        return []
    rows = preview_rows([i for i, _ in hits[:20]], parents=parents)
    read.update(rows)
    signed = {i: r["signature"] for i, r in rows.items()}
    naming = [i for i, sig in signed.items() if gather.speakers_named(terms, [sig])]
    if not naming:
        return []
    lawful = _lawful(naming, vis, include_superseded)
    named = gather.speakers_named(terms, [signed[i] for i in naming if i in lawful])
    return named if len(named) < len(terms) else []


def _expand(
    seeds: list[int],
    scores: dict[int, float],
    trusts: dict[int, str],
    vis: Visibility,
    include_superseded: bool,
) -> dict[int, tuple[int, str]]:
    """One hop over peer edges from the best WEIGHTS.seeds nodes: a neighbour inherits
    WEIGHTS.neighbour times half its best seed's score (max, not sum: many weak seeds are no
    evidence). Updates scores and trusts; returns neighbour -> (seed, edge kind)."""
    neighbours = _neighbours(seeds, vis)
    w = WEIGHTS
    via = _lift(seeds, neighbours, w.neighbour, scores, trusts, vis, include_superseded)
    # Further turns (WEIGHTS.reach hops), each hop's inheritance WEIGHTS.reach_decay times the
    # last's, through the same lawful filter.
    steps = gather.chain(seeds, neighbours, w.reach, _neighbours, vis) if w.reach > 1 else []
    for hop, step in enumerate(steps, start=2):
        weight = w.neighbour * w.reach_decay ** (hop - 1)
        for node, how in _lift(
            seeds, step, weight, scores, trusts, vis, include_superseded
        ).items():
            via.setdefault(node, how)
    return via


def _entity_expand(
    seeds: list[int],
    scores: dict[int, float],
    trusts: dict[int, str],
    vis: Visibility,
    include_superseded: bool,
) -> dict[int, tuple[int, str]]:
    """From the same seeds through the entities they name (memory.recall.entities.shared, inside the
    visibility; hubs named by more than WEIGHTS.entity_cap nodes skipped): another node naming
    one inherits WEIGHTS.entity times half its best seed's score. Returns node -> (seed,
    entity)."""
    reached = _entity_neighbours(seeds, vis, cap=WEIGHTS.entity_cap)
    return _lift(seeds, reached, WEIGHTS.entity, scores, trusts, vis, include_superseded)


def _second_step(
    scores: dict[int, float],
    trusts: dict[int, str],
    vis: Visibility,
    include_superseded: bool,
    asked: str,
    like: Callable[[str, list[int]], Sequence[tuple[int, float]]] | None,
) -> dict[int, float]:
    """The second step of gathering: the best WEIGHTS.second_seeds results so far (lawful,
    after the expansion) make a second query, whose lawful results join the fusion: their names
    and dates as words (WEIGHTS.second_words), and the nodes nearest in meaning to the query
    with them (`like`, WEIGHTS.second_meaning). A question answered by two memories names the
    first; what the first says leads to the second. Returns the nodes it found."""
    w = WEIGHTS
    if not (w.second_words or (w.second_meaning and like is not None)) or not scores:
        return {}
    first = sorted(scores, key=lambda i: (-scores[i], i))[: w.second_seeds]
    lists: list[tuple[Sequence[tuple[int, float]], float]] = []
    if w.second_words:
        words = gather.second_terms(_mention_lines(first))
        if words:
            lists.append((fts_candidates(words, vis, FTS_CANDIDATES), w.second_words))
    if w.second_meaning and like is not None:
        lists.append((like(asked, first), w.second_meaning))
    found: dict[int, float] = {}
    for hits, weight in lists:
        new = {i for i, _ in hits} - set(trusts)
        if new:
            trusts.update(_lawful(new, vis, include_superseded))
        lawful = [(i, v) for i, v in hits if i in trusts and i not in first]
        _add(scores, lawful, weight)
        found.update(lawful)
    return found


def _mention_lines(ids: list[int]) -> list[str]:
    """The names (other than the nodes' signers) and dates the nodes mention (sleep's rows)."""
    from memory.packets import preview_rows

    rows = preview_rows(ids, parents=True)
    signers = {str(r["signature"]).casefold() for r in rows.values()}
    lines = [line for r in rows.values() if r.get("mentions") for line in r["mentions"].split("\n")]
    return [line for line in lines if line.partition(":")[2] not in signers]


def _lift(
    seeds: list[int],
    neighbours: dict[int, list[tuple[int, str]]],
    weight: float,
    scores: dict[int, float],
    trusts: dict[int, str],
    vis: Visibility,
    include_superseded: bool,
) -> dict[int, tuple[int, str]]:
    """Each reached node gains weight times half its best seed's score, once it passed
    liveness (as of T) and trust; returns node -> (seed, what led there)."""
    reached = {n for ns in neighbours.values() for n, _ in ns} - set(trusts)
    if reached:
        # The neighbour query already kept to live nodes now (decayed ones for a dig); as of
        # T, liveness is re-derived.
        alive = vis.alive(reached) if vis.as_of is not None else reached
        trusts.update(lawful_trust(alive, as_of=vis.as_of, include_superseded=include_superseded))
    lifted: dict[int, float] = {}
    via: dict[int, tuple[int, str]] = {}
    for seed in seeds:
        for other, label in neighbours.get(seed, ()):
            gain = weight * scores[seed] / 2
            if other in trusts and gain > lifted.get(other, 0.0):
                lifted[other] = gain
                via[other] = (seed, label)
    for other, gain in lifted.items():
        scores[other] = scores.get(other, 0.0) + gain
    return via


def _lawful(ids: Any, vis: Visibility, include_superseded: bool) -> dict[int, str]:
    alive = vis.alive(ids)
    return lawful_trust(alive, as_of=vis.as_of, include_superseded=include_superseded)


def _feedback(
    scores: dict[int, float],
    terms: list[str],
    vis: Visibility,
    trusts: dict[int, str],
    include_superseded: bool,
) -> tuple[list[str], set[int]]:
    """Pseudo-relevance feedback: the words most shared by the best hits (and not in the query)
    are searched again; what they find joins the fusion at WEIGHTS.feedback. Returns the words
    and the nodes they found."""
    from memory.recall.lexical import document_frequencies

    w = WEIGHTS
    top = sorted(scores, key=scores.__getitem__, reverse=True)[: w.feedback_docs]
    bodies = _feedback_bodies(top)
    counts: dict[str, int] = {}
    seen = set(terms)
    for body in bodies:
        for term in set(query_terms(body)) - seen:
            if len(term) > 2 and not term.isdigit():
                counts[term] = counts.get(term, 0) + 1
    shared = [t for t, c in counts.items() if c >= 2]
    if not shared:
        return [], set()
    visible = document_frequencies(shared, vis)
    df = visible.df
    rare = [t for t in shared if 0 < df[t] <= max(visible.total * 0.02, 5)]
    rare.sort(key=lambda t: (-counts[t], df[t]))
    chosen = rare[: w.feedback_terms]
    if not chosen:
        return [], set()
    hits = fts_candidates(chosen, vis, FTS_CANDIDATES)
    new = {i for i, _ in hits} - set(trusts)
    if new:
        trusts.update(_lawful(new, vis, include_superseded))
    found = [(i, s) for i, s in hits if i in trusts]
    _add(scores, found, w.feedback)
    return chosen, {i for i, _ in found}


def _feedback_bodies(ids: list[int]) -> list[str]:
    marks = ",".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT body FROM memory_node WHERE id IN ({marks})", ids)
        return [row[0] for row in cursor.fetchall()]


def _choose(ordered: list[int], scores: dict[int, float], limit: int) -> list[int]:
    """The top `limit` after the session lift and diversity (memory.recall.gather). The lift only
    reorders what is already here, so `why` has nothing to add for it."""
    w = WEIGHTS
    if len(ordered) <= 1 or not (w.session or w.diversity):
        return ordered[:limit]
    parents = _parents(ordered)
    gather.session_lift(ordered, scores, parents, w.session)
    ordered = sorted(ordered, key=lambda i: (-scores[i], i))
    return gather.select(ordered, scores, limit, parents=parents, diversity=w.diversity)


def _parents(ids: Sequence[int]) -> dict[int, int]:
    marks = ",".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT from_node_id, min(to_node_id) FROM memory_edge WHERE kind = 'derived_from' "
            f"AND from_node_id IN ({marks}) GROUP BY from_node_id",
            list(ids),
        )
        return dict(cursor.fetchall())


def _neighbours(seeds: Sequence[int], vis: Visibility) -> dict[int, list[tuple[int, str]]]:
    """Seed -> its one-hop neighbours (and the edge kind) over edges existing by as_of, inside
    the visibility."""
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
    # CROSS JOIN keeps SQLite on the seeds' edges first: without statistics (no ANALYZE on a
    # real store) it chose to walk every node of the domain instead (LoCoMo: 22 ms -> <1 ms).
    # (PostgreSQL has no CROSS JOIN ... ON, and its planner needs no hint: a plain JOIN.)
    join = "JOIN" if connection.vendor == "postgresql" else "CROSS JOIN"
    sql = (
        f"SELECT e.from_node_id, e.to_node_id, e.kind FROM memory_edge e {join} memory_node n "
        f"ON n.id = e.to_node_id WHERE e.from_node_id IN ({marks}) {kinds} {edge_time} "
        f"AND {where} UNION ALL SELECT e.to_node_id, e.from_node_id, e.kind FROM memory_edge e "
        f"{join} memory_node n ON n.id = e.from_node_id WHERE e.to_node_id IN ({marks}) "
        f"{kinds} {edge_time} AND {where}"
    )
    found: dict[int, list[tuple[int, str]]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, [*seeds, *edge_params, *params, *seeds, *edge_params, *params])
        for seed, other, kind in cursor.fetchall():
            found.setdefault(seed, []).append((other, kind))
    return found
