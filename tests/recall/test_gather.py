"""Gathering evidence around the best hits (memory.recall.gather): further turns, the session lift,
the final pick's diversity,
and query words naming a speaker (searched apart, and left out of what the vectors are asked)."""

from __future__ import annotations

from memory.recall import rank, recall
from memory.recall.gather import second_terms, select, session_lift, without_names
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
    with rank.using(reach=1):
        assert third.pk not in [p["id"] for p in recall("kestrel")]
    with rank.using(reach=2):
        found = {p["id"]: p for p in recall("kestrel", why=True)}
    assert f"via #{first.pk} (responds_to, 2 turns)" in found[third.pk]["why"]
    assert found[third.pk]["score"] < found[first.pk]["score"]


def test_a_query_naming_a_speaker_prefers_the_speakers_words_to_the_name(make_note) -> None:
    about = make_note(
        "I spent the whole long afternoon at the pottery wheel with old friends from the "
        "studio downtown, and then we walked home by the river.",
        signature="Melanie",
    )
    naming = {make_note(f"Melanie! Melanie! {i}", signature="Caroline").pk for i in range(3)}
    filler = "a long, slow note about the weather, the garden, the bus and the neighbours"
    for i in range(6):  # "pottery" made common, in bodies longer than Melanie's
        make_note(f"Pottery {i}: {filler}, {filler}.", signature="Caroline")
    query = "Melanie pottery"
    with rank.using(names=1.0, signer=0.0):
        plain = [p["id"] for p in recall(query, limit=3)]
    assert plain[0] in naming and about.pk not in plain  # the fixture: the name outranks
    with rank.using(names=0.25, signer=0.0):
        apart = [p["id"] for p in recall(query, limit=3)]
    assert apart[0] == about.pk


def test_a_query_of_only_a_speakers_name_still_searches_it(make_note) -> None:
    note = make_note("Melanie said hello.", signature="Melanie")
    assert [p["id"] for p in recall("Melanie")] == [note.pk]


def test_session_lift_favours_a_node_whose_session_holds_other_hits() -> None:
    scores = {1: 1.0, 2: 0.5, 3: 0.9, 4: 0.05}
    parents = {1: 10, 2: 10, 3: 20, 4: 30}
    assert session_lift([1, 3, 2, 4], scores, parents, 0.0) == set() and scores[3] > scores[2]
    assert session_lift([1, 3, 2, 4], scores, parents, 1.0) == {1, 2}  # 3 and 4 are alone
    assert scores[2] == 1.0 and scores[1] == 2.0 and scores[3] == 0.9 and scores[4] == 0.05


def test_select_without_diversity_or_coverage_keeps_the_order() -> None:
    scores = {1: 3.0, 2: 2.0, 3: 1.0}
    kept = select([1, 2, 3], scores, 2, parents={1: 9, 2: 9}, diversity=0)
    assert kept == [1, 2]
    spread = select([1, 2, 3], scores, 2, parents={1: 9, 2: 9}, diversity=5)
    assert spread == [1, 3]


def test_a_sealed_nodes_signer_does_not_count_as_a_speaker(make_note) -> None:
    from review.ceremony import seal

    zed = make_note("My pottery wheel, at last.", signature="Zed")
    for i in range(3):
        make_note(f"Zed! Zed! {i}", signature="Caroline")
    filler = "a long, slow note about the weather, the garden, the bus and the neighbours"
    for i in range(4):
        make_note(f"Pottery {i}: {filler}.", signature="Caroline")

    def order(names: float) -> list[int]:
        with rank.using(names=names, signer=0.0):
            return [p["id"] for p in recall("Zed pottery", limit=8)]

    assert order(1.0) != order(0.25)  # the fixture: Zed's name is searched apart
    seal(zed.pk, owner="owner", reason="private")
    assert zed.pk not in order(1.0) and order(1.0) == order(0.25)


def test_the_second_query_holds_the_names_and_dates_the_first_results_mention() -> None:
    lines = ["name:eiffel tower", "quantity:3 kids", "date:7 may 2023", "name:eiffel tower"]
    assert second_terms(lines) == ["eiffel", "tower", "7", "may", "2023"]


def _recording(monkeypatch):
    """The nodes embedded, then every text the embedder is asked and every pool the meaning
    read is given recorded, under a reranker that wants the meaning (returned)."""
    import numpy as np

    import memory.recall as recall_module
    from memory.recall import rerank
    from memory.vectors import likeness
    from memory.vectors.embed import embed_missing, get_embedder

    monkeypatch.setattr(likeness, "_kept", type(likeness._kept)())  # no query kept from before
    embed_missing()
    embedder = get_embedder()
    asked: list[list[str]] = []
    embed = embedder.embed
    monkeypatch.setattr(embedder, "embed", lambda texts: asked.append(texts) or embed(texts))
    read: list[list[int]] = []
    in_context = recall_module.in_context
    monkeypatch.setattr(
        recall_module, "in_context", lambda *a: read.append(list(a[2])) or in_context(*a)
    )
    n = len(rerank.FEATURES) + len(rerank.MEANING)
    model = rerank.Model(mean=np.zeros(n), scale=np.ones(n), coefficients=np.ones(n))
    return asked, read, rerank.using(model)


def test_recall_embeds_its_query_once_for_the_vector_list_and_the_meaning_read(
    make_note, monkeypatch
) -> None:
    make_note("The heron nests by the mill pond.")
    make_note("The mill wheel turns all winter.")
    asked, read, meaning_wanted = _recording(monkeypatch)
    with meaning_wanted:
        assert len(recall("heron mill wheel")) == 2
    assert asked == [["heron mill wheel"]] and len(read) == 1 and len(read[0]) == 2


def test_without_names_takes_the_named_speakers_words_out_of_the_query() -> None:
    assert without_names("What pets does Nate have?", ["nate"]) == "What pets does have?"
    both = without_names("When did CAROLINE and melanie meet?", ["caroline", "melanie"])
    assert both == "When did and meet?"
    assert without_names("Nate, what did you cook?", ["nate"]) == "what did you cook?"
    assert without_names("Natesque pets", ["nate"]) == "Natesque pets"  # whole words only
    assert without_names("What pets does Nate have?", []) == "What pets does Nate have?"


def test_without_names_takes_a_possessive_with_its_name() -> None:
    assert without_names("What is Nate's dog called?", ["nate"]) == "What is dog called?"
    assert without_names("What is Nate\u2019s dog called?", ["nate"]) == "What is dog called?"
    assert without_names("Nate's", ["nate"]) == "Nate's"  # nothing but the name is left


def test_without_names_keeps_the_whole_query_when_only_names_are_left() -> None:
    assert without_names("Nate and Joanna?", ["nate", "and", "joanna"]) == "Nate and Joanna?"
    assert without_names("Nate Nate", ["nate"]) == "Nate Nate"


def _named_speaker(make_note):
    """Alice's own turn, and Bob's that only names her: "alice" is a speaker named."""
    own = make_note("The kayak trip on Sunday was cold.", signature="Alice")
    greeting = make_note("Thanks, Alice!", signature="Bob")
    return own, greeting


def test_the_vector_list_is_asked_the_query_without_the_speaker_it_names(make_note) -> None:
    from memory.vectors.embed import embed_missing

    own, greeting = _named_speaker(make_note)
    embed_missing()

    def by_vector() -> set[int]:
        return {p["id"] for p in recall("Alice kayak trip", why=True) if "vector" in p["why"]}

    with rank.using(names=1.0):  # no speaker named: the name is in the vectors' query
        assert by_vector() == {own.pk, greeting.pk}
    assert by_vector() == {own.pk}


def test_the_vectors_and_the_meaning_read_embed_the_query_without_the_name(
    make_note, monkeypatch
) -> None:
    _named_speaker(make_note)
    asked, read, meaning_wanted = _recording(monkeypatch)
    with meaning_wanted:
        assert len(recall("Was Alice's kayak trip cold?")) == 2
    assert asked == [["Was kayak trip cold?"]] and len(read) == 1
