"""Gathering evidence around the best hits (memory.gather): further turns, the session lift,
and the final pick's diversity and coverage."""

from __future__ import annotations

from memory import rank
from memory.gather import select, session_lift
from memory.recall import recall
from memory.write import write_node


def _session(name: str):
    return write_node(
        body=f"Session {name}.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source=f"{name}.md",
    ).node


def _turns(make_note, session, bodies: list[str], signer: str = "owner"):
    made = []
    for body in bodies:
        origins = [{"id": session.pk, "relation": "derived_from"}]
        if made:
            origins.append({"id": made[-1].pk, "relation": "responds_to"})
        made.append(make_note(body, origins=origins, signature=signer))
    return made


def test_reach_brings_a_turn_two_replies_away_and_says_via_whom(make_note) -> None:
    first, _, third = _turns(
        make_note, _session("a"), ["The kestrel hovered.", "Oh nice.", "It had a mouse."]
    )
    assert third.pk not in [p["id"] for p in recall("kestrel")]
    with rank.using(reach=2):
        found = {p["id"]: p for p in recall("kestrel", why=True)}
    assert f"via #{first.pk} (responds_to, 2 turns)" in found[third.pk]["why"]
    assert found[third.pk]["score"] < found[first.pk]["score"]


def test_coverage_lets_a_node_holding_another_query_word_in() -> None:
    scores = {1: 3.0, 2: 2.0, 3: 1.0}
    words = {1: ["egret"], 2: ["egret"], 3: ["heron"]}
    weights = {"egret": 1.0, "heron": 1.0}
    plain = select(
        [1, 2, 3], scores, 2, parents={}, diversity=0, words=words, weights=weights, coverage=0.1
    )
    assert plain == [1, 2]  # a little coverage is not enough to pass 2.0 with 1.0
    covered = select(
        [1, 2, 3], scores, 2, parents={}, diversity=0, words=words, weights=weights, coverage=1.0
    )
    assert covered == [1, 3]


def test_coverage_counts_a_named_speaker_as_covered(make_note) -> None:
    jon = _turns(make_note, _session("j"), [f"Dance studio plans {i}." for i in range(3)], "Jon")
    gina = make_note("My store, a studio of sorts.", signature="Gina")
    query = "Jon and Gina studio plans"
    assert gina.pk not in [p["id"] for p in recall(query, limit=2)]
    with rank.using(coverage=3.0):
        top = [p["id"] for p in recall(query, limit=2)]
    assert gina.pk in top and top[0] in {n.pk for n in jon}


def test_session_lift_favours_a_node_whose_session_holds_other_hits() -> None:
    scores = {1: 1.0, 2: 0.5, 3: 0.9, 4: 0.05}
    parents = {1: 10, 2: 10, 3: 20, 4: 30}
    assert session_lift([1, 3, 2, 4], scores, parents, 0.0) == {} and scores[3] > scores[2]
    together = session_lift([1, 3, 2, 4], scores, parents, 1.0)
    assert scores[2] == 1.0 and scores[1] == 2.0 and scores[3] == 0.9 and scores[4] == 0.05
    assert together == {2: 1}  # node 1 is its session's best: lifted, with no one to name


def test_select_without_diversity_or_coverage_keeps_the_order() -> None:
    scores = {1: 3.0, 2: 2.0, 3: 1.0}
    kept = select(
        [1, 2, 3], scores, 2, parents={1: 9, 2: 9}, diversity=0, words={}, weights={}, coverage=0
    )
    assert kept == [1, 2]
    spread = select(
        [1, 2, 3], scores, 2, parents={1: 9, 2: 9}, diversity=5, words={}, weights={}, coverage=0
    )
    assert spread == [1, 3]
