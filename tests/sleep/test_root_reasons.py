"""Why a live node holds itself, and what holds one that does not (memory/forgetting.py
root_reasons and held_by), each reason in the words the node page shows."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from memory import audit, reach
from memory.forgetting import held_by, keep, pending_ids, restore, root_reasons
from memory.models import Edge, EventKind, Node
from memory.read import read
from memory.sleep.decay import decay
from review.ceremony import seal
from tests._helpers.events import authority


@pytest.fixture
def old(settings) -> float:
    return settings.GROVE_DECAY_MIN_AGE_DAYS + 5


def test_each_reason_in_the_order_the_page_lists_them(lone, old, settings):
    node = lone("Permanent, ground, read and kept.", days_old=old)
    Node.objects.filter(pk=node.pk).update(permanent=True, permanent_at=timezone.now())
    authority(node, "rooted")
    read(node.pk, actor="agent:scout")
    keep(node.pk, actor="owner")
    assert root_reasons([node.pk]) == {
        node.pk: [
            "permanent",
            "ground",
            "read 1 time on 1 day, last by agent:scout",
            "kept by the owner",
        ]
    }


@pytest.mark.parametrize("kind", ["proposed", "sealed"])
def test_a_proposed_or_sealed_node_holds_itself_by_its_trust(lone, old, kind):
    node = lone("Protected.", days_old=old)
    if kind == "sealed":
        seal(node.pk, owner="owner")
    else:
        authority(node, kind)
    assert root_reasons([node.pk]) == {node.pk: [kind]}


def test_reads_are_counted_in_times_and_days_plural(lone, old):
    node = lone("Read on two days.", days_old=old)
    with time_machine.travel(timezone.now() - timedelta(days=1)):
        read(node.pk, actor="agent:scout")
    read(node.pk, actor="agent:other")
    read(node.pk, actor="agent:other")
    assert root_reasons([node.pk]) == {node.pk: ["read 3 times on 2 days, last by agent:other"]}


def test_a_read_with_no_reader_named_says_no_one(lone, old):
    node = lone("Read, no reader kept.", days_old=old)
    Node.objects.filter(pk=node.pk).update(access_count=1, read_days=1, last_read_by="")
    assert root_reasons([node.pk]) == {node.pk: ["read 1 time on 1 day"]}


def test_the_owners_words_and_a_restore_say_whose_and_a_held_restore_does_not(lone, make_note, old):
    wrote = lone("The owner's own words.", days_old=old)
    audit.record(EventKind.KEPT, node=wrote.pk, actor="owner", reason=reach.OWNER_WROTE)
    origin = lone("Brought back with what held it.", days_old=old)
    holder = make_note("Holds the origin.", days_old=old, origins=[{"id": origin.pk}])
    decay()  # the sweep lets both go (the owner's let go would stay let go)
    assert Node.objects.filter(pk__in=[holder.pk, origin.pk], decayed_at__isnull=True).count() == 0
    restore(holder.pk, actor="owner")
    assert root_reasons([wrote.pk, holder.pk, origin.pk]) == {
        wrote.pk: ["written by the owner"],
        holder.pk: ["restored by the owner"],
        origin.pk: [],  # restored as held by the holder: the holder is the root
    }


def test_a_young_node_says_its_age_in_whole_days(lone, settings):
    age = settings.GROVE_DECAY_MIN_AGE_DAYS
    node = lone("Written some days ago.", days_old=age - 1.5)
    assert root_reasons([node.pk]) == {node.pk: [f"young ({age - 2} of {age} days)"]}


def test_a_node_exactly_the_age_is_not_young_and_the_sweep_agrees(lone, settings):
    with time_machine.travel(timezone.now(), tick=False):
        node = lone("Exactly the age.", days_old=settings.GROVE_DECAY_MIN_AGE_DAYS)
        assert root_reasons([node.pk]) == {node.pk: []}
        assert pending_ids()[0] == [node.pk]


def test_a_decayed_node_has_no_reasons_at_all(lone, old):
    node = lone("Let go.", days_old=old)
    keep(node.pk, actor="owner")
    Node.objects.filter(pk=node.pk).update(decayed_at=timezone.now())
    assert root_reasons([node.pk]) == {}


def test_what_holds_a_node_is_its_shortest_chain_to_a_root(lone, make_note, old):
    base = lone("At the bottom.", days_old=old)
    middle = make_note("On the bottom.", days_old=old, origins=[{"id": base.pk}])
    top = lone("Cites the middle.", days_old=old)
    Edge.objects.create(from_node=top, to_node=middle, kind="cites", created_by="sleep")
    keep(top.pk, actor="owner")
    assert held_by(base.pk) == {
        "chain": [(middle.pk, "derived_from"), (top.pk, "cites")],
        "roots": ["kept by the owner"],
    }
    # The walk stops at `cap` nodes seen: two do not reach the root two levels up.
    assert held_by(base.pk, cap=2) == {"chain": [], "roots": []}
    assert held_by(base.pk, cap=3)["chain"] == [(middle.pk, "derived_from"), (top.pk, "cites")]


def test_a_decayed_holder_holds_nothing(lone, make_note, old):
    base = lone("At the bottom.", days_old=old)
    holder = make_note("Kept, then let go.", days_old=old, origins=[{"id": base.pk}])
    keep(holder.pk, actor="owner")
    assert held_by(base.pk)["chain"] == [(holder.pk, "derived_from")]
    Node.objects.filter(pk=holder.pk).update(decayed_at=timezone.now())
    assert held_by(base.pk) == {"chain": [], "roots": []}


def test_the_first_root_found_on_a_level_names_the_chain(lone, make_note, old):
    base = lone("Held by two.", days_old=old)
    plain = make_note("Holds it, held by nothing.", days_old=old, origins=[{"id": base.pk}])
    kept = make_note("Holds it, kept.", days_old=old, origins=[{"id": base.pk}])
    keep(kept.pk, actor="owner")
    assert plain.pk < kept.pk
    assert held_by(base.pk) == {
        "chain": [(kept.pk, "derived_from")],
        "roots": ["kept by the owner"],
    }


def test_two_holders_on_a_level_are_walked_together_and_the_first_route_names_the_chain(
    lone, make_note, old
):
    base = lone("Held by two.", days_old=old)
    left = make_note("Holds it, on the left.", days_old=old, origins=[{"id": base.pk}])
    right = make_note("Holds it, on the right.", days_old=old, origins=[{"id": base.pk}])
    top = lone("Cites both holders.", days_old=old)
    for holder in (left, right):
        Edge.objects.create(from_node=top, to_node=holder, kind="cites", created_by="sleep")
    keep(top.pk, actor="owner")
    assert held_by(base.pk) == {
        "chain": [(left.pk, "derived_from"), (top.pk, "cites")],
        "roots": ["kept by the owner"],
    }


def test_the_pending_ids_are_taken_at_the_clock_asked(lone, settings):
    nearly = lone("Of age in an hour.", days_old=settings.GROVE_DECAY_MIN_AGE_DAYS - 1 / 24)
    assert pending_ids()[0] == []
    assert pending_ids(now=timezone.now() + timedelta(hours=2))[0] == [nearly.pk]
