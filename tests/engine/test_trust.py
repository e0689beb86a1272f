"""Trust derived from authority events, many nodes at a time (memory/trust.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.models import Event, Node
from memory.trust import trust_counts, trust_map, with_trust
from review.ceremony import propose, seal, unseal
from tests._helpers.acts import OWNER, root_as_owner


def test_it_answers_for_exactly_the_nodes_asked(make_note):
    asked, other = make_note("asked about"), make_note("not asked about")
    propose(other.pk, actor="agent:scout")
    assert trust_map([asked.pk]) == {asked.pk: "unreviewed"}


def test_a_sealed_node_does_not_stop_the_others_being_judged(make_note):
    sealed, rooted, proposed = make_note("hidden"), make_note("true"), make_note("maybe")
    seal(sealed.pk, owner=OWNER)
    root_as_owner(rooted)
    propose(proposed.pk, actor="agent:scout")
    assert trust_map([sealed.pk, rooted.pk, proposed.pk]) == {
        sealed.pk: "sealed",
        rooted.pk: "ground",
        proposed.pk: "proposed",
    }


def test_trust_is_answered_for_exactly_the_ids_asked(make_note) -> None:
    asked, other = make_note("Asked about."), make_note("Sealed, not asked about.")
    seal(other.pk, owner="owner")
    assert trust_map([asked.pk]) == {asked.pk: "unreviewed"}


# Ids no test node reaches: padding that fills a chunk of 900 without naming a node.
PADDING = [10**9 + i for i in range(899)]


def test_trust_is_derived_past_the_first_chunk_of_ids(make_note) -> None:
    first, last = make_note("Sealed, first of many."), make_note("Sealed, last of many.")
    for node in (first, last):
        seal(node.pk, owner="owner")
    trusts = trust_map([first.pk, *PADDING, last.pk])
    assert trusts[first.pk] == trusts[last.pk] == "sealed"
    assert trusts[PADDING[0]] == "unreviewed"


def test_trust_breaks_a_tie_of_instants_by_the_later_event(make_note, monkeypatch) -> None:
    node = make_note("Sealed and unsealed within one tick of the clock.")
    tick = datetime.now(UTC)
    monkeypatch.setattr("django.utils.timezone.now", lambda: tick)
    seal(node.pk, owner="owner")
    unseal(node.pk, owner="owner")
    assert trust_map([node.pk])[node.pk] == "unreviewed"
    assert with_trust(Node.objects.filter(pk=node.pk)).get().trust == "unreviewed"


def test_trust_counts_count_every_node_of_a_state(make_note) -> None:
    first, second = make_note("Sealed one."), make_note("Sealed two.")
    before = trust_counts()
    seal(first.pk, owner="owner")
    seal(second.pk, owner="owner")
    after = trust_counts()
    assert after["sealed"] == before["sealed"] + 2
    assert after["unreviewed"] == before["unreviewed"] - 2


def test_trust_counts_ignore_a_ceremony_event_on_no_node(make_note) -> None:
    # No ceremony writes one, but the log's table does not forbid it (an imported or hand-made
    # log could hold it): it is nobody's trust, so no count moves.

    make_note("Unreviewed, and stays counted so.")
    before = trust_counts()
    Event.objects.create(kind="sealed", node=None, actor="owner")
    assert trust_counts() == before


def test_trust_counts_take_the_callers_total_as_the_node_count(make_note) -> None:
    # The overview counts its nodes once and passes the total: no second count is made.

    make_note("One more unreviewed node.")
    nodes = Node.objects.count()
    assert trust_counts()["unreviewed"] == nodes
    assert trust_counts(total=nodes + 5)["unreviewed"] == nodes + 5


def test_with_trust_annotates_every_node_when_given_no_queryset(make_note) -> None:
    node = make_note("The garden needs water.")
    seal(node.pk, owner="owner")
    trusts = dict(with_trust().values_list("pk", "trust"))
    assert trusts[node.pk] == "sealed"
    assert len(trusts) == Node.objects.count()


def test_trust_map_and_with_trust_agree_when_the_clock_steps_back(make_note, monkeypatch) -> None:
    # One rule, two readings: both order a node's seal and unseal by (at, id).
    node = make_note("Sealed, then unsealed by a clock set back a minute.")
    later = datetime.now(UTC)
    monkeypatch.setattr("django.utils.timezone.now", lambda: later)
    seal(node.pk, owner="owner")
    monkeypatch.setattr("django.utils.timezone.now", lambda: later - timedelta(minutes=1))
    unseal(node.pk, owner="owner")
    annotated = with_trust(Node.objects.filter(pk=node.pk)).get().trust
    assert trust_map([node.pk])[node.pk] == annotated


def test_with_trust_as_of_an_instant_before_the_root_is_not_ground(make_note) -> None:
    node = make_note("The garden needs water.")
    proposed = propose(node.pk, actor="agent:scout")
    root_as_owner(node)
    then = with_trust(Node.objects.filter(pk=node.pk), as_of=proposed.at).get()
    assert then.trust == "proposed"
