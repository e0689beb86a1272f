"""Recall's bounds and log, and rank's speaker naming, seeds, pool and explanations: behaviours
that round 6's one-child mutation run of memory.recall.rank.rank, memory.recall.rank._names and
memory.recall.recall found no test pinned (issue 16, docs/mutation.md). Each test is named for
the behaviour it holds; unit level, real SQLite, no browser and no worker."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.utils import timezone

import memory.recall as recall_module
from memory.errors import Invalid
from memory.models import Node, RecallLog
from memory.recall import MAX_LIMIT, lexical, rank, recall, rerank
from memory.recall.entities import record_mentions
from memory.recall.lexical import query_terms
from memory.recall.rank import _names
from memory.visibility import Visibility
from tests._helpers.events import mark
from tests._helpers.nodes import store
from tests._helpers.texts import OTHER, SEEKER

EVERYTHING = Visibility.of(domains=None, scope="both", as_of=None)
OTHER_SPEAKER = rerank.FEATURES.index("other_speaker")


@pytest.fixture(autouse=True)
def _fresh_document_counts():
    # Document counts are cached per database name and term; ids restart with each test's
    # rollback, so a count cached by an earlier test could speak of other rows.
    lexical._df_cache.clear()
    yield
    lexical._df_cache.clear()


def _rank(query: str, *, limit: int = 10, include_superseded: bool = False) -> list[rank.Ranked]:
    """rank() in the fused order (no reranker model), over everything, without vectors."""
    with rerank.using(None):
        return rank.rank(
            query,
            query_terms(query),
            EVERYTHING,
            vector_hits=[],
            limit=limit,
            include_superseded=include_superseded,
        )


def _why(ranked: list[rank.Ranked]) -> dict[int, list[str]]:
    return {r.id: r.why for r in ranked}


# --- recall: its limit and its log ---------------------------------------------------------


def test_recall_takes_a_limit_from_1_to_max_and_refuses_others_as_bad_limit(lone):
    lone("Heron at the pond.")
    assert len(recall("heron", scope="wild", limit=1)) == 1
    assert len(recall("heron", scope="wild", limit=MAX_LIMIT)) == 1
    for limit in (0, MAX_LIMIT + 1, True):  # a bool is not a count
        with pytest.raises(Invalid) as refused:
            recall("heron", limit=limit)
        assert refused.value.code == "bad_limit"
    assert RecallLog.objects.count() == 2  # a refusal logs nothing


def test_recall_returns_ten_by_default(db):
    store(*[f"Heron sighting number {'again ' * i}." for i in range(12)])
    assert len(recall("heron", scope="wild")) == 10


def test_the_recall_log_holds_the_asked_query_domains_as_of_actor_and_time_taken(db, monkeypatch):
    ticks = [2.0]
    monkeypatch.setattr(
        recall_module.time, "perf_counter", lambda: ticks.pop(0) if ticks else 2.0123456
    )
    asked = "heron " * 500
    recall(asked, domains=["work"], as_of="2025-03-04T05:06:07+00:00", actor="")
    log = RecallLog.objects.get()
    assert log.query == asked[:2000]
    assert log.domains == ["work"]
    assert log.as_of == datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
    assert log.actor == "owner"
    assert log.took_ms == 12.346  # (2.0123456 - 2.0) * 1000 to three places
    recall("heron", actor="agent:scout")
    last = RecallLog.objects.latest("pk")
    assert (last.domains, last.as_of, last.actor) == (["*"], None, "agent:scout")


# --- rank._names: which query words name a speaker ------------------------------------------


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


# --- rank: a named speaker ------------------------------------------------------------------


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
    ranked, [(ordered, x)] = _observed("alice kayak", include_superseded=True)
    other = dict(zip(ordered, x[:, OTHER_SPEAKER], strict=True))
    assert other == {alice.pk: 0.0, bob.pk: 1.0}


# --- rank: seeds, pool, expansions ----------------------------------------------------------


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


# --- rank: why ------------------------------------------------------------------------------


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
