"""Forgetting by day (memory/forgetting.py): the owner's acts on one node (keep, let go, restore)
and what they refuse in words, and the list of what the next sleep would let go (pending_decays):
when each becomes eligible, why, in what order. The sleep step that lets go: test_decay.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.errors import Conflict, NotFound
from memory.forgetting import _created_at, keep, let_go, pending_decays, restore
from memory.models import Edge, Event, EventKind, Node
from memory.reach import mark
from memory.sleep.decay import decay
from review.ceremony import root, seal
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
    assert item["why"][0] == "no agent read it"
    assert item["why"][-1] == "it arrived 20 days ago"


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
    assert "it is still new (10.3 of the 14 days new nodes are kept)" in item["why"]


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
    node = make_note("let go, then kept by mistake")
    let_go(node.pk, actor="owner")
    with pytest.raises(Conflict):
        keep(node.pk, actor="owner")
    assert Node.objects.get(pk=node.pk).decayed_at is not None
    assert not Event.objects.filter(node=node, kind=EventKind.KEPT).exists()


def test_keep_adds_no_read_and_still_holds_its_chain(make_note, lone):
    p, k, g = chain(make_note, lone)
    g = keep(g.pk, actor="owner")
    assert (g.access_count, g.read_days, g.last_accessed_at) == (0, 0, None)
    assert Event.objects.filter(node=g, kind="kept", actor="owner").exists()
    decay()
    assert not any(is_decayed(n) for n in (p, k, g))


@pytest.mark.parametrize("kind", ["rooted", "proposed"])
def test_let_go_refuses_ground_and_proposed(lone, kind):
    node = lone("Protected.")
    authority(node, kind)
    with pytest.raises(Conflict, match="never let go"):
        let_go(node.pk, actor="owner")
    assert not is_decayed(node)


def test_let_go_refuses_a_permanent_node(lone):
    node = lone("Permanent.")
    Node.objects.filter(pk=node.pk).update(permanent=True, permanent_at=timezone.now())
    with pytest.raises(Conflict, match="permanent"):
        let_go(node.pk, actor="owner")


def test_restore_brings_a_node_back_with_its_event(lone):
    node = let_go(lone("Let go, then missed.").pk, actor="owner")
    assert node.decayed_at is not None
    node = restore(node.pk, actor="owner")
    assert node.decayed_at is None
    kinds = list(Event.objects.filter(node=node).order_by("id").values_list("kind", "reason"))
    assert kinds == [("arrived", ""), ("decayed", "owner_let_go"), ("restored", "owner_restore")]


def test_restore_brings_back_what_the_node_holds_and_survives_the_next_sleep(make_note, lone):
    p, k, g = chain(make_note, lone)
    decay()
    assert all(is_decayed(n) for n in (p, k, g))
    restore(k.pk, actor="owner")
    assert not is_decayed(k) and not is_decayed(p) and is_decayed(g)
    held = Event.objects.get(node=p, kind="restored")
    assert held.reason == "held_by_restore" and held.related_node_id == k.pk
    assert decay()["count"] == 0
    assert not is_decayed(k) and not is_decayed(p)


def test_restore_leaves_the_owners_let_go_alone(make_note, lone):
    p, k, g = chain(make_note, lone)
    let_go(p.pk, actor="owner")
    decay()
    restore(g.pk, actor="owner")
    assert not is_decayed(g) and not is_decayed(k) and is_decayed(p)


def test_restore_refuses_a_live_node(lone):
    with pytest.raises(Conflict, match="live") as refused:
        restore(lone("Alive.").pk, actor="owner")
    assert refused.value.code == "live"


def test_pending_decays_lists_now_and_soon_with_why(lone):
    now_node = lone("Eligible now.", days_old=20)
    soon = lone("Eligible in four days.", days_old=10)
    lone("Far off.", days_old=1)
    assert [p["id"] for p in pending_decays()] == [now_node.pk]
    items = pending_decays(within_days=5)
    assert [p["id"] for p in items] == [now_node.pk, soon.pk]
    assert items[1]["days_until_eligible"] == pytest.approx(4, abs=0.1)
    assert items[0]["why"] == [
        "no agent read it",
        "nothing you keep depends on it",
        "it has no links to anything alive",
        "it arrived 20 days ago",
    ]
    assert not items[1]["eligible_now"] and items[0]["eligible_now"]


def test_pending_decays_name_a_link_that_never_keeps_a_node(lone):
    old = lone("An old page.", days_old=40)
    other = lone("Another page like it.")
    Edge.objects.create(from_node=other, to_node=old, kind="similar", created_by="sleep")
    (item,) = pending_decays()
    assert item["id"] == old.pk
    assert "its only link is 'similar', made by sleep" in item["why"]


def test_pending_decays_soon_waits_for_a_young_holder(make_note, lone):
    p = lone("An old page.", days_old=40)
    k = make_note("A note on it from ten days ago.", days_old=10, origins=[{"id": p.pk}])
    assert pending_decays() == []
    items = {i["id"]: i for i in pending_decays(within_days=5)}
    assert set(items) == {p.pk, k.pk}
    assert items[p.pk]["days_until_eligible"] == pytest.approx(4, abs=0.1)


def test_pending_decays_with_a_limit_gives_the_most_eligible(lone):
    oldest = lone("Oldest page.", days_old=60)
    older = lone("Older page.", days_old=40)
    lone("Old page.", days_old=20)
    assert len(pending_decays()) == 3
    assert [p["id"] for p in pending_decays(limit=2)] == [oldest.pk, older.pk]


def test_pending_decays_with_a_limit_skips_protected_nodes(lone):
    ground = lone("Ground, never decays.", days_old=60)
    authority(ground, "rooted")
    other = lone("Plain old page.", days_old=30)
    assert [p["id"] for p in pending_decays(limit=1)] == [other.pk]


def test_pending_decays_filters_by_domain(lone):
    lone("Work page.", days_old=20, domain="work")
    assert pending_decays(domains=["personal"]) == []
    assert len(pending_decays(domains=["work"])) == 1


def test_pending_now_and_soon_equal_two_independent_marks(make_note, lone):
    lone("Old, nothing holds it.", days_old=40)
    held = lone("Old, held by a note ten days old.", days_old=40)
    make_note(
        "Ten days old: holds the page four more days.", days_old=10, origins=[{"id": held.pk}]
    )
    lone("Eligible in two days.", days_old=12)
    lone("Young for a while yet.", days_old=1)
    now = timezone.now()
    at_now = set(mark(now - timedelta(days=14)).garbage.tolist())
    later = set(mark(now - timedelta(days=14 - 5)).garbage.tolist())
    assert at_now and len(later - at_now) == 3  # the fixture: the two lists differ
    items = pending_decays(within_days=5, now=now)
    assert {i["id"] for i in items if i["eligible_now"]} == at_now
    assert {i["id"] for i in items if not i["eligible_now"]} == later - at_now


def test_pending_decays_within_days_filters_by_domain(lone):
    lone("Work page, eligible now.", days_old=20, domain="work")
    home = lone("Home page, eligible in two days.", days_old=12, domain="personal")
    assert [i["id"] for i in pending_decays(within_days=5, domains=["personal"])] == [home.pk]


def test_pending_decays_counts_the_days_until_a_young_holder_lets_go(make_note, lone):
    p = lone("An old page.", days_old=40)
    make_note("A note on it, half a day short of the age.", days_old=13.5, origins=[{"id": p.pk}])
    items = {i["id"]: i for i in pending_decays(within_days=1)}
    assert items[p.pk]["days_until_eligible"] == pytest.approx(0.5, abs=0.05)


def test_keep_records_the_owners_keep_and_refuses_a_decayed_node_by_code(lone):
    node = lone("Kept by the owner.", days_old=40)
    keep(node.pk, actor="owner")
    event = Event.objects.get(node=node, kind="kept")
    assert (event.actor, event.reason) == ("owner", "owner_keep")
    gone = lone("Let go, then kept.")
    let_go(gone.pk, actor="owner")
    with pytest.raises(Conflict) as refused:
        keep(gone.pk, actor="owner")
    assert refused.value.code == "decayed"
    assert refused.value.message == f"node {gone.pk} has decayed; restore it to keep it"


def test_pending_decays_put_eligible_now_first_whatever_the_ids(lone):
    soon = lone("Eligible in a few days.", days_old=10.33)
    now_node = lone("Eligible now.", days_old=20)
    items = pending_decays(within_days=5)
    assert [i["id"] for i in items] == [now_node.pk, soon.pk]
    assert (items[0]["kind"], items[0]["days_until_eligible"]) == ("internet", 0.0)
    assert items[1]["days_until_eligible"] == 3.7  # 14 - 10.33 days, to one decimal


def test_pending_decays_excerpt_is_the_first_160_characters(lone):
    lone("x" * 200, days_old=20)
    (item,) = pending_decays()
    assert item["excerpt"] == "x" * 160


def test_each_root_says_why_it_holds_itself_and_a_held_node_names_its_chain(lone, settings):
    from memory.forgetting import held_by, keep, root_reasons
    from memory.read import read

    old = settings.GROVE_DECAY_MIN_AGE_DAYS + 5
    below = lone("Held by what the owner kept.", days_old=old)
    kept = lone(
        "Kept by the owner.",
        days_old=old,
        origins=[{"id": below.pk, "relation": "derived_from"}],
    )
    keep(kept.pk, actor="owner")
    reader = lone("Read by an agent.", days_old=old)
    read(reader.pk, actor="agent:scout")
    young = lone("Written yesterday.", days_old=1)
    loose = lone("Old, unread, unkept.", days_old=old)
    assert root_reasons([kept.pk, reader.pk, young.pk, loose.pk, below.pk]) == {
        kept.pk: ["kept by the owner"],
        reader.pk: ["read 1 time on 1 day, last by agent:scout"],
        young.pk: [f"young (1 of {settings.GROVE_DECAY_MIN_AGE_DAYS} days)"],
        loose.pk: [],
        below.pk: [],
    }
    assert held_by(kept.pk) == {"chain": [], "roots": ["kept by the owner"]}
    assert held_by(below.pk) == {
        "chain": [(kept.pk, "derived_from")],
        "roots": ["kept by the owner"],
    }
    assert held_by(loose.pk) == {"chain": [], "roots": []}


def test_ground_restored_and_open_questions_are_roots_for_their_own_reasons(lone, settings):
    from memory.forgetting import root_reasons
    from memory.questions import plant_question

    old = settings.GROVE_DECAY_MIN_AGE_DAYS + 5
    ground = lone("Rooted by the owner.", days_old=old)
    root(ground.pk, adopting_words="True.", expected_body_hash=ground.body_hash, owner="owner")
    back = lone("Let go, then brought back.", days_old=old)
    let_go(back.pk, actor="owner")
    restore(back.pk, actor="owner")
    question = plant_question(
        "What holds this?", about=[ground.pk], signature="agent:scout", domain=ground.domain
    )
    assert root_reasons([ground.pk, back.pk, question.pk]) == {
        ground.pk: ["ground"],
        back.pk: ["restored by the owner"],
        question.pk: [f"young (0 of {settings.GROVE_DECAY_MIN_AGE_DAYS} days)", "an open question"],
    }
    assert root_reasons([question.pk])[question.pk][-1] == "an open question"  # asked alone


def test_pending_decays_with_a_limit_in_a_domain_give_that_domains_first(lone):
    lone("Personal, oldest id.", days_old=40)
    work = [lone(f"Work page {i}.", days_old=40, domain="work") for i in range(3)]
    lone("Personal, later id.", days_old=40)
    assert len(pending_decays()) == 5
    items = pending_decays(limit=2, domains=["work"])
    assert [i["id"] for i in items] == [work[0].pk, work[1].pk]
