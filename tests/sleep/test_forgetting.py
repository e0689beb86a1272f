"""Forgetting by day (memory/forgetting.py): the owner's acts on one node (keep, let go, restore)
and what they refuse in words, and the list of what the next sleep would let go (pending_decays):
when each becomes eligible, why, in what order. The sleep step that lets go: test_decay.py."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memory.errors import Conflict, NotFound
from memory.forgetting import _created_at, keep, let_go, pending_decays, restore
from memory.models import Edge, Event, EventKind, Node
from memory.sleep.decay import decay
from review.ceremony import seal
from tests._helpers.events import authority
from tests._helpers.nodes import chain, is_decayed


def test_days_until_eligible_count_days_of_86400_seconds(lone, settings):
    # Long spans, so that a day a second too long shows in the first decimal.
    settings.GROVE_DECAY_MIN_AGE_DAYS = 10_000
    node = lone("Nine thousand days old.", days_old=9_000)
    (item,) = pending_decays(within_days=2_000)
    assert (item["id"], item["eligible_now"]) == (node.pk, False)
    assert (item["age_days"], item["days_until_eligible"]) == (9000.0, 1000.0)


def test_a_young_holding_cycle_is_eligible_when_its_members_own_ages_say(lone):
    a, b = lone("Cites b.", days_old=13.5), lone("Cites a.", days_old=13.6)
    Edge.objects.create(from_node=a, to_node=b, kind="cites", created_by="sleep")
    Edge.objects.create(from_node=b, to_node=a, kind="cites", created_by="sleep")
    items = pending_decays(within_days=5)
    # Each holds the other, so both go when the younger does, in half a day.
    assert {(i["id"], i["days_until_eligible"]) for i in items} == {(a.pk, 0.5), (b.pk, 0.5)}


def test_creation_times_are_read_past_the_first_chunk_of_900_ids(lone):
    node = lone("The 901st id asked for.")
    padding = [10**9 + i for i in range(900)]  # ids no test node reaches
    assert _created_at([*padding, node.pk]) == {node.pk: node.created_at}


def test_restoring_a_node_brings_back_each_of_its_decayed_origins(make_note, lone):
    first, second = lone("First origin.", days_old=40), lone("Second origin.", days_old=40)
    both = make_note("On both.", days_old=40, origins=[{"id": first.pk}, {"id": second.pk}])
    decay()
    assert all(is_decayed(n) for n in (first, second, both))
    restore(both.pk, actor="owner")
    assert not any(is_decayed(n) for n in (first, second, both))


def test_a_let_go_origin_stays_decayed_whatever_happened_to_it_after(make_note, lone):
    p, k, g = chain(make_note, lone)
    let_go(p.pk, actor="owner")
    seal(p.pk, owner="owner")  # a later event on p, not a decay
    decay()
    restore(g.pk, actor="owner")
    assert not is_decayed(g) and not is_decayed(k) and is_decayed(p)


def test_pending_soon_come_by_days_until_eligible_not_by_id(lone):
    later, sooner = lone("Three days to go.", days_old=11), lone("Two days to go.", days_old=12)
    assert [i["id"] for i in pending_decays(within_days=5)] == [sooner.pk, later.pk]


def test_pending_soon_keep_to_the_domains_asked_for(lone):
    work = lone("Work, soon.", days_old=12, domain="work")
    lone("Personal, soon.", days_old=12)
    assert [i["id"] for i in pending_decays(within_days=5, domains=["work"])] == [work.pk]


def test_pending_decays_by_default_lists_only_what_is_eligible_now(lone):
    old = lone("Eligible now.", days_old=20)
    lone("Eligible in half a day.", days_old=13.5)
    assert [i["id"] for i in pending_decays()] == [old.pk]


def test_a_pending_item_gives_each_documented_field_by_name(lone):
    node = lone("Old, in the work domain.", days_old=20, domain="work")
    (item,) = pending_decays()
    assert {k: v for k, v in item.items() if k != "why"} == {
        "id": node.pk,
        "kind": "internet",
        "domain": "work",
        "excerpt": "Old, in the work domain.",
        "created_at": node.created_at.isoformat(),
        "age_days": 20.0,
        "eligible_now": True,
        "days_until_eligible": 0.0,
    }
    assert item["why"][:2] == ["not read", "20 days old"]


def test_a_node_as_old_as_the_threshold_is_not_called_young(lone):
    lone("Fourteen days old, to the tenth.", days_old=14.02)
    (item,) = pending_decays()
    assert item["age_days"] == 14.0
    assert not [w for w in item["why"] if w.startswith("young")]


def test_let_go_says_why_it_refuses(lone):
    gone = let_go(lone("Let go already.", days_old=40).pk, actor="owner")
    permanent = lone("Read into permanence.")
    Node.objects.filter(pk=permanent.pk).update(permanent=True, permanent_at=timezone.now())
    ground = lone("Held as ground.")
    authority(ground, "rooted")
    expected = {
        gone.pk: f"node {gone.pk} has already decayed",
        permanent.pk: f"node {permanent.pk} is permanent: reads made it so, and that never reverts",
        ground.pk: f"node {ground.pk} is ground; a ground node is never let go",
    }
    for node_id, message in expected.items():
        with pytest.raises(Conflict) as refused:
            let_go(node_id, actor="owner")
        assert refused.value.message == message


def test_the_owners_acts_on_a_missing_node_say_it_does_not_exist(db):
    for act in (keep, let_go, restore):
        with pytest.raises(NotFound) as refused:
            act(10**9, actor="owner")
        assert refused.value.message == f"node {10**9} does not exist"


def test_pending_decays_within_days_lists_an_old_holding_cycle(lone):
    a, b = lone("Cites b.", days_old=40), lone("Cites a.", days_old=40)
    Edge.objects.create(from_node=a, to_node=b, kind="cites", created_by="sleep")
    Edge.objects.create(from_node=b, to_node=a, kind="cites", created_by="sleep")
    items = pending_decays(within_days=1)
    assert {(i["id"], i["eligible_now"]) for i in items} == {(a.pk, True), (b.pk, True)}


def test_pending_decays_limit_counts_the_eligible_now_and_the_soon_together(lone):
    now_node = lone("Eligible now.", days_old=20)
    soon = [lone(f"Eligible in {14 - d} days.", days_old=d) for d in (12, 11)]
    items = pending_decays(within_days=5, limit=2)
    assert [i["id"] for i in items] == [now_node.pk, soon[0].pk]


def test_pending_decays_give_the_age_to_a_tenth_and_say_when_a_node_is_young(lone):
    lone("Ten and a third days old.", days_old=10.33)
    (item,) = pending_decays(within_days=5)
    assert item["age_days"] == 10.3
    assert "young: 10.3 of 14 days" in item["why"]


def test_let_go_refuses_a_decayed_permanent_or_ground_node_by_its_code(lone):
    gone = lone("Let go already.", days_old=40)
    let_go(gone.pk, actor="owner")
    permanent = lone("Read into permanence.", days_old=40)
    Node.objects.filter(pk=permanent.pk).update(permanent=True, permanent_at=timezone.now())
    ground = lone("Held as ground.", days_old=40)
    authority(ground, "rooted")
    refusals = ((gone, "already_decayed"), (permanent, "permanent"), (ground, "is_ground"))
    for node, code in refusals:
        with pytest.raises(Conflict) as refused:
            let_go(node.pk, actor="owner")
        assert refused.value.code == code


def test_pending_decays_in_a_domain_reach_past_the_first_chunk_of_900(lone):
    ids = [lone(f"Old page {i}.", days_old=40, domain="work").pk for i in range(901)]
    assert [i["id"] for i in pending_decays(domains=["work"])] == ids


def test_creation_times_are_read_for_every_id_however_many(lone):
    node = lone("The last of many ids.")
    missing = [10**9 + i for i in range(1800)]  # two chunks of 900 before it
    assert _created_at([*missing, node.pk]) == {node.pk: node.created_at}


def test_keep_refuses_a_decayed_node(make_note):
    from memory.errors import Conflict
    from memory.forgetting import keep, let_go

    node = make_note("let go, then kept by mistake")
    let_go(node.pk, actor="owner")
    with pytest.raises(Conflict):
        keep(node.pk, actor="owner")
    assert Node.objects.get(pk=node.pk).decayed_at is not None
    assert not Event.objects.filter(node=node, kind=EventKind.KEPT).exists()
