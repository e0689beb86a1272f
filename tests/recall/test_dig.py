"""Dig (memory/recall/dig.py): recall over what was forgotten, under the same visibility, and the
agent's read of a dug node bringing it back with what it holds."""

from __future__ import annotations

import pytest

from memory.errors import Invalid
from memory.forgetting import let_go
from memory.models import Event, EventKind, Node, RecallLog
from memory.recall import recall
from memory.recall.dig import dig, dug_recently, forgotten_matches, revive_dug
from review.ceremony import reject, seal
from tests._helpers.events import mark


def ids(packets) -> list[int]:
    return [p["id"] for p in packets]


def test_dig_finds_a_decayed_node_by_its_words(make_note) -> None:
    gone = make_note("The lighthouse keeper's ledger of storms.")
    let_go(gone.pk, actor="owner")
    assert ids(recall("lighthouse ledger")) == []
    found = dig("lighthouse ledger")
    assert ids(found) == [gone.pk]
    assert found[0]["decayed"] is True
    assert found[0]["decay_reason"] == "owner_let_go"
    assert found[0]["decayed_why"] == "you let it go"
    assert found[0]["decayed_at"]


def test_dig_leaves_live_nodes_to_recall(make_note) -> None:
    make_note("The lighthouse stands on the cape.")
    assert ids(dig("lighthouse")) == []


def test_recall_says_how_many_forgotten_nodes_matched(make_note) -> None:
    for text in ("Lighthouse log one.", "Lighthouse log two."):
        let_go(make_note(text).pk, actor="owner")
    make_note("A live lighthouse note.")
    assert forgotten_matches("lighthouse") == 2
    assert forgotten_matches("nothing-like-it") == 0


def test_forgotten_matches_count_each_word_of_the_query_not_only_the_ranked_ones(
    make_note, monkeypatch
) -> None:
    # A ranking budget of one posting scores only the rarest word; a count needs no ranking.
    monkeypatch.setattr("memory.recall.lexical.FTS_POSTINGS_BUDGET", 1)
    for text in ("A lighthouse log.", "A harbour log.", "Another harbour log."):
        let_go(make_note(text).pk, actor="owner")
    assert forgotten_matches("lighthouse harbour") == 3


def test_a_sealed_or_rejected_decayed_node_is_never_dug_up_nor_counted(make_note) -> None:
    sealed = make_note("The lighthouse code word is albatross.")
    rejected = make_note("The lighthouse burned in 1901.")
    seal(sealed.pk, owner="owner")
    reject(rejected.pk, owner="owner", reason="false")
    for node in (sealed, rejected):
        mark(node, "decayed")
    assert (
        Node.objects.filter(pk__in=[sealed.pk, rejected.pk], decayed_at__isnull=False).count() == 2
    )
    assert dig("lighthouse") == []
    assert forgotten_matches("lighthouse") == 0


def test_a_dig_never_reaches_outside_its_domains_or_scope(make_note) -> None:
    work = make_note("The lighthouse budget for next year.", domain="work")
    wild = make_note("A lighthouse article.", kind="hearsay", jurisdiction="wild")
    for node in (work, wild):
        let_go(node.pk, actor="owner")
    assert set(ids(dig("lighthouse", scope="both"))) == {work.pk, wild.pk}
    assert ids(dig("lighthouse", domains=["personal"], scope="both")) == [wild.pk]
    assert ids(dig("lighthouse", domains=["work"])) == [work.pk]
    assert ids(dig("lighthouse", domains=["work"], scope="wild")) == []
    assert forgotten_matches("lighthouse", domains=["personal"]) == 0
    assert forgotten_matches("lighthouse", domains=["work"]) == 1


def test_every_dig_is_logged_as_a_dig(make_note) -> None:
    gone = make_note("The lighthouse ledger.")
    let_go(gone.pk, actor="owner")
    recall("lighthouse", actor="agent:scout")
    dig("lighthouse", actor="agent:scout")
    logs = list(RecallLog.objects.order_by("id").values_list("dig", "result_ids"))
    assert logs == [(False, []), (True, [gone.pk])]
    assert dug_recently("agent:scout", gone.pk)
    assert not dug_recently("agent:other", gone.pk)


def test_a_dig_refuses_a_past_instant() -> None:
    with pytest.raises(Invalid):
        recall("lighthouse", as_of="2026-01-01T00:00:00Z", forgotten=True)


def test_reviving_a_dug_node_brings_back_what_it_holds(make_note, root_note) -> None:
    origin = make_note("The keeper's first ledger.")
    child = make_note(
        "The lighthouse ledger, copied.", origins=[{"id": origin.pk, "relation": "derived_from"}]
    )
    mark(origin, "decayed")
    mark(child, "decayed")
    assert revive_dug(child.pk, actor="agent:scout") == [origin.pk]
    assert Node.objects.filter(pk__in=[child.pk, origin.pk], decayed_at__isnull=True).count() == 2
    revived = Event.objects.get(node_id=child.pk, kind=EventKind.REVIVED)
    assert (revived.reason, revived.actor) == ("dug_and_read", "agent:scout")
    held = Event.objects.get(node_id=origin.pk, kind=EventKind.RESTORED)
    assert (held.reason, held.related_node_id) == ("held_by_dug", child.pk)
