"""Recall explains itself on request: a short, bounded `why` per packet."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.recall import recall
from memory.recall.why import WHY_CHARS, explain, reasons
from memory.vectors.embed import embed_missing
from memory.visibility import Visibility
from tests._helpers.nodes import store

EVERYTHING = Visibility.of(domains=None, scope="both", as_of=None)


def test_why_is_absent_unless_asked(make_note):
    make_note("The heron nests by the old mill pond.")
    assert "why" not in recall("heron")[0]


def test_why_names_the_matched_words(make_note):
    make_note("The heron nests by the old mill pond.")
    packet = recall("heron pond otter", why=True)[0]
    assert packet["why"].startswith("words: heron, pond")
    assert "otter" not in packet["why"]


def test_why_names_the_edge_a_neighbour_came_through(make_note):
    hit = make_note("The heron stood in the reeds.")
    reply = make_note("Quiet weekend overall.", origins=[{"id": hit.pk, "relation": "responds_to"}])
    embed_missing()
    packets = {p["id"]: p for p in recall("heron reeds", why=True)}
    assert reply.pk in packets
    assert f"via #{hit.pk} (responds_to)" in packets[reply.pk]["why"]


def test_why_names_a_date_the_query_names(make_note):
    note = make_note("We planted the beans.", referent_time="2023-05-08T10:00:00Z")
    make_note("We planted the peas.", referent_time="2023-06-20T10:00:00Z")
    packets = recall("What did we do on 8 May, 2023?", why=True)
    assert packets[0]["id"] == note.pk and "date named" in packets[0]["why"]


def test_why_is_bounded(make_note):
    words = [f"word{i}x{'y' * 20}" for i in range(30)]
    make_note(" ".join(words))
    packet = recall(" ".join(words), why=True)[0]
    assert len(words[0]) * 3 < 200 < len(" ".join(words))  # the words alone would not fit
    assert 0 < len(packet["why"]) <= WHY_CHARS


def test_an_agent_asks_for_why_over_the_api(client, make_note):
    from tests._helpers.agents import error_of, make_agent

    agent = make_agent(client, domains=["personal"])
    make_note("The heron nests by the old mill pond.")
    plain = agent.get("recall", {"q": "heron"}).json()["results"]
    asked = agent.get("recall", {"q": "heron", "why": "true"}).json()["results"]
    assert "why" not in plain[0] and asked[0]["why"] == "words: heron"
    refused = agent.get("recall", {"q": "heron", "why": "perhaps"})
    assert refused.status_code == 400 and error_of(refused) == "bad_field"
    assert "why must be true or false" in refused.json()["error"]["message"]


def test_the_search_page_shows_why(owner_client, make_note):
    make_note("The heron nests by the old mill pond.")
    body = owner_client.get("/search/", {"q": "heron pond"}).content.decode()
    assert "why: words: heron, pond" in body


def test_feedback_brings_in_a_node_sharing_the_best_hits_rare_word(make_note) -> None:
    from memory.recall import rank

    first = make_note("Heron nesting near a marsh; kingfisher sighting.")
    second = make_note("Heron flight over a lake; kingfisher again.")
    third = make_note("A kingfisher dove into a stream.")
    assert third.pk not in [p["id"] for p in recall("heron")]
    with rank.using(feedback=1.0):
        packets = {p["id"]: p for p in recall("heron", why=True)}
    assert {first.pk, second.pk, third.pk} <= set(packets)
    assert packets[third.pk]["why"] == "feedback: kingfisher"
    assert packets[first.pk]["why"] == "words: heron; feedback: kingfisher"


def test_diversity_lets_another_parent_into_the_top(make_note) -> None:
    from memory.recall import rank
    from memory.write import write_node

    other = write_node(
        body="Another notebook.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="other.md",
    ).node
    strong = [make_note(f"Egret, egret, egret {i}.") for i in range(3)]
    weak = make_note(
        "An egret seen once near a pier today.",
        origins=[{"id": other.pk, "relation": "derived_from"}],
    )
    ids = {n.pk for n in strong}
    best, second = [p["id"] for p in recall("egret", limit=2)]
    assert {best, second} <= ids  # one parent holds the whole top
    with rank.using(diversity=10.0):
        assert [p["id"] for p in recall("egret", limit=2)] == [best, weak.pk]


def test_feedback_finds_a_superseded_node_only_when_asked_for_superseded(make_note) -> None:
    from memory.recall import rank
    from tests._helpers.events import mark

    make_note("Heron nesting near a marsh; kingfisher sighting.")
    make_note("Heron flight over a lake; kingfisher again.")
    old = make_note("A kingfisher dove into a stream.")
    mark(old, "superseded")
    with rank.using(feedback=1.0):
        assert old.pk not in [p["id"] for p in recall("heron")]
        found = {p["id"]: p for p in recall("heron", include_superseded=True)}
    assert found[old.pk]["trust"] == "superseded"


@dataclass
class _Placed:
    id: int
    why: list[str] = field(default_factory=list)


def test_why_names_only_the_selective_query_words_a_body_holds(db):
    # 52 of 52 documents hold "common": past the common share, it is not a selective term.
    (heron, *_) = store("Heron, common.", *["Common."] * 51)
    assert explain([_Placed(heron.pk, ["words"])], ["heron", "common"], EVERYTHING) == {
        heron.pk: "words: heron"
    }


def test_why_says_related_when_no_list_or_edge_explains_a_node(db):
    (node,) = store("Nothing matched.")
    assert explain([_Placed(node.pk)], ["heron"], EVERYTHING) == {node.pk: "related"}


def test_why_keeps_a_line_of_exactly_its_bound_and_cuts_a_longer_one_to_it(db):
    a, b = store("One.", "Two.")
    found = explain(
        [_Placed(a.pk, ["x" * WHY_CHARS]), _Placed(b.pk, ["y" * 161])], ["z"], EVERYTHING
    )
    assert found == {a.pk: "x" * WHY_CHARS, b.pk: "y" * (WHY_CHARS - 1) + "…"}


def test_each_reason_has_its_own_words_in_the_lists_order_then_edge_entity_and_speaker():
    lists = {
        "substring": {2: 1.0},  # a list without the node is passed over, not the end
        "words": {1: 2.0},
        "vector": {1: 0.876},
        "date": {1: 0.3},
        "feedback": {1: 0.0},
    }
    tags = reasons(
        1, lists, {"feedback": "kingfisher"}, {1: (7, "cites")}, signer=True, entity=(7, "ada")
    )
    assert tags == [
        "words",
        "vector 0.88",
        "date named",
        "feedback: kingfisher",
        "via #7 (cites)",
        "entity: ada",
        "speaker named",
    ]
