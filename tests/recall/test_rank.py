"""Rank (memory/recall/rank.py): how the lists' scores add up, the expansion seeds and their
neighbours over edges, reply chains and entities, the session lift, feedback words, the speaker
named in a query, the reranker's pool, and the reasons each placed node is given. Unit level on
its functions, and rank() whole in the fused order (no reranker model)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory.models import Node
from memory.recall import rank, rerank
from memory.recall.entities import record_mentions
from memory.recall.lexical import query_terms
from memory.recall.rank import (
    _add,
    _choose,
    _entity_expand,
    _expand,
    _feedback,
    _lawful,
    _lift,
    _names,
    _neighbours,
)
from memory.visibility import Visibility
from review.ceremony import root
from tests._helpers.events import mark
from tests._helpers.nodes import store
from tests._helpers.texts import OTHER, SEEKER

EVERYTHING = Visibility.of(domains=None, scope="both", as_of=None)


def test_each_list_adds_its_scores_over_its_best_times_its_weight():
    scores = {2: 0.25}
    _add(scores, [(1, 4.0), (2, 2.0)], 0.5)
    assert scores == {1: 0.5, 2: 0.5}
    _add(scores, [(4, 0.5), (1, 0.25)], 1.0)  # a best below 1 (cosines) counts as well
    _add(scores, [(3, 0.0)], 1.0)  # a best of 0: nothing to divide by, nothing added
    _add(scores, [(3, 1.0)], 0.0)  # a list weighted 0 adds no node, not even at 0
    _add(scores, [], 1.0)
    assert scores == {1: 1.0, 2: 0.5, 4: 1.0}


def test_ranks_trust_is_as_of_the_instant_asked_for(make_note):
    node = make_note("Rooted after the instant.")
    then = timezone.now()
    root(node.pk, adopting_words="I hold this.", expected_body_hash=node.body_hash, owner="owner")
    view = Visibility.of(domains=None, scope="both", as_of=then)
    assert _lawful([node.pk], view, False) == {node.pk: "unreviewed"}


def test_the_session_lift_raises_candidates_sharing_a_parent_above_a_lone_one(make_note, lone):
    c, a, b = lone("Alone, the oldest."), make_note("Session, first."), make_note("Second.")
    scores = {c.pk: 1.0, a.pk: 0.6, b.pk: 0.6}
    with rank.using(session=1.0):
        assert _choose([c.pk, a.pk, b.pk], scores, 2) == [a.pk, b.pk]
        assert scores == {c.pk: 1.0, a.pk: 1.2, b.pk: 1.2}  # 0.6 * (1 + 1.2 / 1.2)
        two = {a.pk: 0.5, b.pk: 0.5}
        assert _choose([a.pk, b.pk], two, 2) == [a.pk, b.pk] and two == {a.pk: 1.0, b.pk: 1.0}


def test_without_lift_or_diversity_the_order_given_is_kept(make_note):
    # The reranker's order, which the scores alone would undo.
    a, b = make_note("First by score."), make_note("First by the reranker.")
    assert _choose([b.pk, a.pk], {a.pk: 1.0, b.pk: 0.5}, 2) == [b.pk, a.pk]


def test_a_neighbour_decayed_at_the_instant_is_not_lifted_as_of_it(make_note):
    seed, other = make_note("Seed."), make_note("Decayed, then restored.")
    now = timezone.now()
    mark(other, "decayed", at=now - timedelta(hours=2))
    mark(other, "restored", at=now)
    Node.objects.filter(pk=other.pk).update(decayed_at=None)
    then = Visibility.of(domains=None, scope="both", as_of=now - timedelta(hours=1))
    near = {seed.pk: [(other.pk, "responds_to")]}
    for view, expected in ((then, {}), (EVERYTHING, {other.pk: (seed.pk, "responds_to")})):
        assert _lift([seed.pk], near, 1.0, {seed.pk: 1.0}, {seed.pk: "x"}, view, False) == expected


def test_a_neighbours_trust_is_as_of_the_instant_and_superseded_when_asked_for(make_note):
    seed, later, old = make_note("Seed."), make_note("Rooted later."), make_note("Superseded.")
    mark(old, "superseded")
    then = timezone.now()
    root(later.pk, adopting_words="I hold this.", expected_body_hash=later.body_hash, owner="owner")
    near = {seed.pk: [(later.pk, "cites"), (old.pk, "cites")]}
    trusts = {seed.pk: "x"}
    view = Visibility.of(domains=None, scope="both", as_of=then)
    _lift([seed.pk], near, 1.0, {seed.pk: 1.0}, trusts, view, True)
    assert trusts == {seed.pk: "x", later.pk: "unreviewed", old.pk: "superseded"}


def test_a_neighbour_gains_half_its_best_seeds_score_times_the_weight_first_seed_on_ties(
    make_note,
):
    s1, s2, s3, n, m = (make_note(f"Node {i}.") for i in range(5))
    scores = {s1.pk: 1.0, s2.pk: 0.8, s3.pk: 1.0, n.pk: 0.1}
    trusts = dict.fromkeys(scores, "unreviewed")
    near = {
        s1.pk: [(n.pk, "cites")],
        s2.pk: [(n.pk, "answers"), (m.pk, "cites")],
        s3.pk: [(n.pk, "answers")],
    }
    via = _lift([s1.pk, s2.pk, s3.pk], near, 0.5, scores, trusts, EVERYTHING, False)
    assert via == {n.pk: (s1.pk, "cites"), m.pk: (s2.pk, "cites")}
    assert scores[n.pk] == pytest.approx(0.35) and scores[m.pk] == pytest.approx(0.2)


def test_the_edge_expansion_reaches_a_superseded_reply_when_asked_for_superseded(make_note):
    seed = make_note("The heron stood in the reeds.")
    reply = make_note("Superseded reply.", origins=[{"id": seed.pk, "relation": "responds_to"}])
    mark(reply, "superseded")
    for include, expected in ((True, {reply.pk: (seed.pk, "responds_to")}), (False, {})):
        trusts = {seed.pk: "unreviewed"}
        assert _expand([seed.pk], {seed.pk: 1.0}, trusts, EVERYTHING, include) == expected


def test_each_further_turn_of_a_reply_chain_inherits_half_the_last_ones_weight(make_note):
    a = make_note("The heron stood in the reeds.")
    b = make_note("Reply one.", origins=[{"id": a.pk, "relation": "responds_to"}])
    c = make_note("Reply two.", origins=[{"id": b.pk, "relation": "responds_to"}])
    d = make_note("Reply three.", origins=[{"id": c.pk, "relation": "responds_to"}])
    mark(d, "superseded")
    scores, trusts = {a.pk: 1.0}, {a.pk: "unreviewed"}
    with rank.using(reach=3, neighbour=1.0, reach_decay=0.5):
        via = _expand([a.pk], scores, trusts, EVERYTHING, True)
    assert via == {
        b.pk: (a.pk, "responds_to"),
        c.pk: (a.pk, "responds_to, 2 turns"),
        d.pk: (a.pk, "responds_to, 3 turns"),
    }
    assert scores == {a.pk: 1.0, b.pk: 0.5, c.pk: 0.25, d.pk: 0.125}


def test_the_neighbours_as_of_an_instant_are_over_the_edges_existing_then(make_note):
    a = make_note("Seed.")
    b = make_note("Reply.", origins=[{"id": a.pk, "relation": "responds_to"}])
    then = timezone.now()
    make_note("A later reply.", origins=[{"id": a.pk, "relation": "responds_to"}])
    view = Visibility.of(domains=None, scope="both", as_of=then)
    assert _neighbours([a.pk], view) == {a.pk: [(b.pk, "responds_to")]}


def _fed(scores: dict[int, float], **weights) -> tuple[list[str], set[int]]:
    trusts = dict.fromkeys(scores, "unreviewed")
    with rank.using(feedback=1.0, **weights):
        return _feedback(scores, ["query"], EVERYTHING, trusts, False)


def test_feedback_reads_the_best_scored_hits_not_the_newest_or_the_worst(db):
    a, b, c, d = store(
        "Kingfisher on the weir.", "Kingfisher at dawn.", "Osprey over it.", "Osprey again."
    )
    scores = {a.pk: 1.0, b.pk: 0.9, c.pk: 0.2, d.pk: 0.1}
    assert _fed(scores, feedback_docs=2) == (["kingfisher"], {a.pk, b.pk})


def test_feedback_words_are_longer_than_two_letters_and_not_numbers(db):
    a, b = store("Owl ox 1999 marsh.", "Owl ox 1999 fen.")
    assert _fed({a.pk: 1.0, b.pk: 0.9}) == (["owl"], {a.pk, b.pk})


def test_a_feedback_word_is_rare_in_at_most_five_documents_of_a_small_store(db):
    # Five documents hold kingfisher and six hold heron; with 11 nodes, 2% is under five.
    nodes = store(
        *["Kingfisher and heron."] * 2, *["Kingfisher."] * 3, *["Heron."] * 4, "Egret.", "Ibis."
    )
    a, b = nodes[0], nodes[1]
    assert _fed({a.pk: 1.0, b.pk: 0.9}) == (["kingfisher"], set(range(1, 6)))


def test_feedback_words_come_most_shared_first(db):
    nodes = store("Apple orchard.", "Apple zebra.", "Zebra crossing.", "Zebra stripes.")
    scores = {n.pk: 1.0 - n.pk / 10 for n in nodes}
    assert _fed(scores, feedback_docs=4, feedback_terms=1)[0] == ["zebra"]


@pytest.mark.sqlite_only  # FTS5's unicode61 does not fold ß, so "strasse" does not find it
def test_a_shared_word_the_index_finds_in_one_document_is_fed_back(db):
    a, b = store("Straße im Regen.", "Strasse im Schnee.")
    assert _fed({a.pk: 1.0, b.pk: 0.9}) == (["strasse"], {b.pk})


@pytest.mark.sqlite_only  # as above
def test_a_shared_word_the_index_cannot_find_is_not_fed_back(db):
    a, b = store("Straße im Regen.", "Straße im Schnee.")
    assert _fed({a.pk: 1.0, b.pk: 0.9}) == ([], set())


def test_the_entity_expansion_reaches_a_superseded_node_when_asked_for_superseded(make_note):
    seeker, other = make_note(SEEKER), make_note(OTHER)
    mark(other, "superseded")
    record_mentions(after_id=0, limit=None)
    for include, expected in ((True, {other.pk: (seeker.pk, "ottoline brackwater")}), (False, {})):
        trusts = {seeker.pk: "unreviewed"}
        with rank.using(entity=1.0):
            found = _entity_expand([seeker.pk], {seeker.pk: 1.0}, trusts, EVERYTHING, include)
        assert found == expected


OTHER_SPEAKER = rerank.FEATURES.index("other_speaker")


def _rank(query: str, *, limit: int = 10, include_superseded: bool = False) -> list[rank.Ranked]:
    """rank() in the fused order (no reranker model), over everything, without vectors."""
    with rerank.using(None):
        return rank.rank(
            query,
            query_terms(query),
            EVERYTHING,
            limit=limit,
            include_superseded=include_superseded,
        )


def _why(ranked: list[rank.Ranked]) -> dict[int, list[str]]:
    return {r.id: r.why for r in ranked}


def _signed(*signatures: str) -> list[Node]:
    return store(*[f"Kayak trip {i}." for i in range(len(signatures))], signatures=signatures)


def test_a_speaker_is_named_from_the_word_lists_first_twenty_hits_only(db):
    nodes = _signed(*["bench"] * 20, "alice")
    hits = [(n.pk, 1.0) for n in nodes]
    read: dict = {}
    assert _names(["alice", "kayak"], hits, EVERYTHING, False, read, False) == []
    assert sorted(read) == [n.pk for n in nodes[:20]]
    hits.insert(19, hits.pop())  # alice's node now 20th
    assert _names(["alice", "kayak"], hits, EVERYTHING, False, {}, False) == ["alice"]


def test_a_query_of_nothing_but_speaker_names_names_none(db):
    nodes = _signed("alice", "bob")
    hits = [(n.pk, 1.0) for n in nodes]
    assert _names(["alice", "bob"], hits, EVERYTHING, False, {}, False) == []
    assert _names(["alice", "bob", "kayak"], hits, EVERYTHING, False, {}, False) == [
        "alice",
        "bob",
    ]


def test_a_superseded_speaker_is_named_only_when_superseded_nodes_are_asked_for(db):
    (node,) = _signed("alice")
    mark(node, "superseded")
    hits = [(node.pk, 1.0)]
    assert _names(["alice", "kayak"], hits, EVERYTHING, True, {}, False) == ["alice"]
    assert _names(["alice", "kayak"], hits, EVERYTHING, False, {}, False) == []


def _observed(query: str, *, include_superseded: bool = False, limit: int = 10):
    """rank()'s result and each pool the reranker was shown: (ordered ids, feature rows)."""
    pools: list = []
    with rerank.observing(lambda ordered, x: pools.append((ordered, x))):
        ranked = _rank(query, limit=limit, include_superseded=include_superseded)
    return ranked, pools


def test_a_named_speaker_is_told_to_the_reranker_and_in_why_and_the_name_still_ranks(lone):
    alice = lone("Kayak trip on Sunday.", signature="alice")
    greeting = lone("Alice waved from the shore.", signature="bob")
    ranked, [(ordered, x)] = _observed("alice kayak")
    assert {r.id for r in ranked} == {alice.pk, greeting.pk}  # a hit by the name alone ranks
    other = dict(zip(ordered, x[:, OTHER_SPEAKER], strict=True))
    assert other == {alice.pk: 0.0, greeting.pk: 1.0}
    assert _why(ranked)[alice.pk] == ["words", "speaker named"]
    assert _why(ranked)[greeting.pk] == ["words"]


def test_a_superseded_speaker_is_named_in_rank_when_superseded_nodes_are_asked_for(lone):
    alice = lone("Kayak trip on Sunday.", signature="alice")
    bob = lone("Kayak lesson with Alice.", signature="bob")
    mark(alice, "superseded")
    _ranked, [(ordered, x)] = _observed("alice kayak", include_superseded=True)
    other = dict(zip(ordered, x[:, OTHER_SPEAKER], strict=True))
    assert other == {alice.pk: 0.0, bob.pk: 1.0}


def test_the_expansion_seeds_are_the_best_scored_nodes(make_note):
    best = make_note("Heron heron heron.")
    weaker = make_note("Heron seen once among many other birds of the marsh and fen today.")
    cited = make_note("Unrelated words.", origins=[{"id": best.pk, "relation": "cites"}])
    other = make_note("Other words.", origins=[{"id": weaker.pk, "relation": "cites"}])
    with rank.using(seeds=1):
        found = _why(_rank("heron"))
    assert found[cited.pk] == [f"via #{best.pk} (cites)"]
    assert other.pk not in found


def test_the_reranker_sees_the_best_three_times_limit_candidates_at_least_pool(db):
    # Longer bodies score lower: node 1 is the best, then 2, 3...
    store(*[f"Kayak {'paddle ' * i}." for i in range(70)])
    ranked, [(ordered, _)] = _observed("kayak", limit=21)
    assert [r.id for r in ranked] == list(range(1, 22))
    assert ordered == list(range(1, 64))
    ranked, [(ordered, _)] = _observed("kayak", limit=1)
    assert [r.id for r in ranked] == [1]
    assert ordered == list(range(1, rank.POOL + 1))


def test_the_edge_expansion_reaches_a_superseded_node_when_asked_for_superseded(make_note):
    seed = make_note("Heron nests here.")
    reply = make_note("Unrelated words.", origins=[{"id": seed.pk, "relation": "cites"}])
    mark(reply, "superseded")
    assert _why(_rank("heron", include_superseded=True))[reply.pk] == [f"via #{seed.pk} (cites)"]
    assert reply.pk not in _why(_rank("heron"))


def test_rank_reaches_a_superseded_node_through_an_entity_when_asked_for_superseded(make_note):
    seeker, other = make_note(SEEKER), make_note(OTHER)
    mark(other, "superseded")
    record_mentions(after_id=0, limit=None)
    with rank.using(entity=1.0):
        found = _why(_rank("periwinkle trowel", include_superseded=True))
        assert other.pk not in _why(_rank("periwinkle trowel"))
    assert found == {seeker.pk: ["words"], other.pk: ["entity: ottoline brackwater"]}


def test_a_date_is_a_reason_only_while_dates_weigh(lone):
    heron = lone("Heron at the pond.")
    query = f"heron {timezone.now():%B %Y}"
    assert _why(_rank(query))[heron.pk] == ["words", "date named"]
    with rank.using(date=0.0):
        assert _why(_rank(query))[heron.pk] == ["words"]


def _fed_store(lone) -> list[Node]:
    # Shared by 5, 4, 3 and 2 of the five hits: fed back in that order (ties would not be).
    return [
        lone("Kayak otter beaver badger marten."),
        lone("Kayak otter beaver badger marten, again."),
        lone("Kayak otter beaver badger."),
        lone("Kayak otter beaver."),
        lone("Kayak otter."),
    ]


def test_feedback_is_a_reason_naming_its_first_three_words_only_while_feedback_weighs(lone):
    first, *_ = _fed_store(lone)
    assert _why(_rank("kayak"))[first.pk] == ["words"]
    with rank.using(feedback=0.5):
        assert _why(_rank("kayak"))[first.pk] == ["words", "feedback: otter, beaver, badger"]


def test_a_substring_reason_names_the_querys_spaceless_runs(lone):
    tower = lone("東京タワーと大阪城に行った。")
    assert _why(_rank("東京タワー 大阪城"))[tower.pk] == ["substring: 東京タワー, 大阪城"]


@pytest.mark.sqlite_only  # the join order is SQLite's plan; PostgreSQL's planner takes no hint
def test_the_neighbours_read_starts_from_the_seeds_edges_in_both_directions(make_note):
    a, b = make_note("One."), make_note("Two.")
    vis = Visibility.of(domains=["personal"], scope="home", as_of=None)
    with CaptureQueriesContext(connection) as queries:
        _neighbours([a.pk, b.pk], vis)
    (read,) = [q["sql"] for q in queries.captured_queries if "FROM memory_edge e" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + read)
        plan = [row[3] for row in cursor.fetchall() if row[3].startswith(("SEARCH", "SCAN"))]
    # Not every node of the domain walked first (no ANALYZE on a real store to tell it better).
    assert [step.split()[1] for step in plan] == ["e", "n", "e", "n"], plan
