"""Trust derived from authority events, many nodes at a time (memory/trust.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.models import Node
from memory.trust import trust_map
from review.ceremony import propose, seal
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
    from memory.trust import trust_map

    first, last = make_note("Sealed, first of many."), make_note("Sealed, last of many.")
    for node in (first, last):
        seal(node.pk, owner="owner")
    trusts = trust_map([first.pk, *PADDING, last.pk])
    assert trusts[first.pk] == trusts[last.pk] == "sealed"
    assert trusts[PADDING[0]] == "unreviewed"


def test_trust_breaks_a_tie_of_instants_by_the_later_event(make_note, monkeypatch) -> None:
    from memory.trust import trust_map, with_trust
    from review.ceremony import unseal

    node = make_note("Sealed and unsealed within one tick of the clock.")
    tick = datetime.now(UTC)
    monkeypatch.setattr("django.utils.timezone.now", lambda: tick)
    seal(node.pk, owner="owner")
    unseal(node.pk, owner="owner")
    assert trust_map([node.pk])[node.pk] == "unreviewed"
    assert with_trust(Node.objects.filter(pk=node.pk)).get().trust == "unreviewed"
