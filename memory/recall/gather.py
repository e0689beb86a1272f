"""Gathering: evidence that sits around recall's best hits, for questions answered by several
nodes (LoCoMo's multi-evidence questions: most span sessions, some turns away from a hit).

memory.recall.rank calls these on its candidates, each as its weight says
(memory.recall.rank.Weights; docs/recall.md says which are on and why):
- `chain`: turns further along a conversation from the best seeds (replies of replies), hop
  by hop over responds_to edges; rank lifts them through the same lawful filter as any
  neighbour (visibility SQL, liveness as of T, trust); on (reach 2);
- `session_lift`: a candidate whose parent (derived_from: a session, a file) holds other
  strong candidates gains a share of that parent's total: a session that answers several
  query words at once is likelier to hold the rest of the answer; off (a large file's
  notes would lift one another);
- `select`: the final greedy pick, where a node whose parent already placed nodes gives way
  (diversity);
- `speakers_named`: the query words naming a signer of the best hits, which rank searches
  apart at a lower weight; on (names 0.25);
- `without_names`: the query text without those words, which the vector list and the
  reranker's meaning are asked;
- `answered`: the turn each candidate responds to, where the reader may see it, for the
  reranker's meaning in context (memory.vectors.likeness.in_context);
- `second_terms`: the second step's words, the names and dates the first results mention
  (rank's second step also searches by meaning near them: memory.recall.rank._second_step).
Only candidates already judged lawful reach session_lift and select: they reorder, never admit.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

from django.db import connection

from memory.visibility import Visibility, lawful

# Words of the first results' mentions one second query holds: three results name a handful.
SECOND_TERMS = 12
# What joins a name to its possessive "s" (without_names): a straight or a curly apostrophe.
POSSESSIVE_MARKS = ("'", "\u2019")

Neighbours = Callable[..., dict[int, list[tuple[int, str]]]]


def chain(
    seeds: Sequence[int],
    first: dict[int, list[tuple[int, str]]],
    hops: int,
    neighbours: Neighbours,
    vis: object,
) -> list[dict[int, list[tuple[int, str]]]]:
    """For each hop from 2 to `hops`: seed -> the nodes reached over responds_to edges from
    the previous hop's nodes (and a label naming the seed's distance), none reached before."""
    found: list[dict[int, list[tuple[int, str]]]] = []
    frontier = {
        seed: {n for n, kind in first.get(seed, ()) if kind == "responds_to"} for seed in seeds
    }
    seen = {seed: {seed} | {n for n, _ in first.get(seed, ())} for seed in seeds}
    for hop in range(2, hops + 1):
        ends = sorted({n for nodes in frontier.values() for n in nodes})
        if not ends:
            break
        reached = neighbours(ends, vis)
        step: dict[int, list[tuple[int, str]]] = {}
        for seed, nodes in frontier.items():
            new = {
                other
                for n in nodes
                for other, kind in reached.get(n, ())
                if kind == "responds_to" and other not in seen[seed]
            }
            seen[seed] |= new
            frontier[seed] = new
            if new:
                step[seed] = [(n, f"responds_to, {hop} turns") for n in sorted(new)]
        found.append(step)
    return found


def session_lift(
    ordered: Sequence[int], scores: dict[int, float], parents: dict[int, int], weight: float
) -> set[int]:
    """Each candidate's score grows by `weight` times the share of its parent's total (the
    sum of its candidates' scores) in the best parent's total, times the candidate's own
    score. Returns the nodes that gained."""
    if not weight or not ordered:
        return set()
    totals: dict[int, float] = {}
    for node_id in ordered:
        parent = parents.get(node_id)
        if parent is not None:
            totals[parent] = totals.get(parent, 0.0) + scores[node_id]
    top = max(totals.values(), default=0.0)
    if top <= 0:
        return set()
    lifted = set()
    for node_id in ordered:
        parent = parents.get(node_id)
        if parent is None or totals[parent] <= scores[node_id]:
            continue  # alone in its session: nothing beside it to gather
        scores[node_id] *= 1 + weight * totals[parent] / top
        lifted.add(node_id)
    return lifted


def select(
    ordered: Sequence[int],
    scores: dict[int, float],
    limit: int,
    *,
    parents: dict[int, int],
    diversity: float,
) -> list[int]:
    """Greedy: at each step the node with the best score divided by 1 + diversity times the
    number of placed nodes of its parent (MMR by session)."""
    if not diversity or len(ordered) <= 1:
        return list(ordered[:limit])
    placed: dict[int, int] = {}
    left = list(ordered)
    chosen: list[int] = []
    while left and len(chosen) < limit:
        # Ties: the earlier (better ranked) node.
        pick = max(
            left, key=lambda i: scores[i] / (1 + diversity * placed.get(parents.get(i, -i), 0))
        )
        left.remove(pick)
        chosen.append(pick)
        parent = parents.get(pick, -pick)
        placed[parent] = placed.get(parent, 0) + 1
    return chosen


def speakers_named(terms: Sequence[str], signatures: Sequence[str]) -> list[str]:
    """The query words that name a signer among `signatures` (those of the lawful best hits):
    such a word is matched by the signer boost, and in a body it mostly marks the other
    speaker addressing that one ("Thanks, Melanie!"), not the named speaker's own words."""
    from memory.recall.lexical import query_terms

    names = {t for signature in signatures for t in query_terms(signature)}
    return [t for t in terms if t in names]


def without_names(query: str, named: Sequence[str]) -> str:
    """The query (NFKC-normalised) without the words naming a speaker (`named`: query words, as
    speakers_named gives them), a possessive ("Nate's") whole: what the vector list and the
    reranker's meaning are asked. A name pulls the nearest turns in meaning towards those
    addressing that speaker ("Thanks, Nate!"), not the speaker's own. The whole query when no
    other word would be left."""
    from memory.recall.lexical import word_spans

    if not named:
        return query
    text = unicodedata.normalize("NFKC", query)
    names = set(named)
    spans = word_spans(text)
    cut: list[tuple[int, int]] = []
    kept_words = False
    i = 0
    while i < len(spans):
        start, end, words = spans[i]
        if not words or not set(words) <= names:
            kept_words = True
            i += 1
            continue
        nxt = spans[i + 1] if i + 1 < len(spans) else None
        if nxt is not None and nxt[2] == ["s"] and text[end : nxt[0]] in POSSESSIVE_MARKS:
            end = nxt[1]  # "Nate's": the possessive goes with the name
            i += 1
        cut.append((start, end))
        i += 1
    if not cut or not kept_words:
        return query
    pieces, at = [], 0
    for start, end in cut:
        pieces.append(text[at:start])
        at = end
    pieces.append(text[at:])
    # The gaps a name leaves ("does  have", " , what"): one space, none before punctuation.
    joined = re.sub(r"\s+([,.;:?!])", r"\1", " ".join("".join(pieces).split()))
    return joined.lstrip(",.;: ")


def second_terms(mention_lines: Sequence[str]) -> list[str]:
    """The query words of the first results' mentions ("kind:entity" lines, their signers'
    names left out by the caller): names and dates, not quantities ("3 years" names no
    event). At most SECOND_TERMS, in the order named."""
    from memory.recall.lexical import query_terms

    words: list[str] = []
    for line in mention_lines:
        kind, _, entity = line.partition(":")
        if kind in ("name", "date"):
            words.extend(query_terms(entity))
    return list(dict.fromkeys(words))[:SECOND_TERMS]


def answered(ids: Sequence[int], vis: Visibility) -> dict[int, int]:
    """id -> the node it responds to (the lowest, if several), for those of `ids` whose answered
    node the reader under `vis` may see (memory.visibility.lawful: scope, as of, live, neither
    sealed nor rejected): a hidden turn lends no meaning to its reply."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    marks = ",".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT from_node_id, MIN(to_node_id) FROM memory_edge WHERE kind = 'responds_to' "
            f"AND from_node_id IN ({marks}) GROUP BY from_node_id",
            ids,
        )
        found = dict(cursor.fetchall())
    seen = lawful(set(found.values()), vis)
    return {i: to for i, to in found.items() if to in seen}
