"""Sleep's mark, sweep and promotion, and the walk: behaviours the mutation runs of issue 16
found untested (docs/mutation.md, round 3). Each test is named for the behaviour it pins."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from memory import reach
from memory.errors import Conflict, Forbidden, Invalid
from memory.forgetting import let_go, pending_decays, restore
from memory.models import Edge, Node
from memory.reach import candidates, holders_first, mark
from memory.walk import around, open_walk, read_ticket, step
from tests._helpers.events import authority


def test_candidates_are_the_old_unread_nodes_no_event_holds(lone):
    old = sorted(lone(f"Old page {i}.", days_old=40).pk for i in range(3))
    restored = lone("Old, let go and restored by the owner.", days_old=40)
    let_go(restored.pk, actor="owner")
    restore(restored.pk, actor="owner")
    lone("Young page.", days_old=1)
    assert candidates(timezone.now() - timedelta(days=14)).tolist() == old


def test_holders_first_ignores_holders_outside_the_garbage():
    # 1 (live) holds 3, 3 holds 2; only 2 and 3 are garbage: 3 is free at once, then 2.
    assert holders_first(np.array([2, 3]), (np.array([1, 3]), np.array([3, 2]))) == [3, 2]


def test_an_edge_into_the_highest_id_at_the_packing_bound_loads_row_by_row(lone, monkeypatch):
    citer, cited = lone("Young, cites the next."), lone("Old, cited.", days_old=40)
    Edge.objects.create(from_node=citer, to_node=cited, kind="cites", created_by="sleep")
    assert Node.objects.order_by("-id").first().pk == cited.pk
    monkeypatch.setattr(reach, "_PAIR", cited.pk)  # the highest id equals the bound: no packing
    assert cited.pk not in mark(timezone.now() - timedelta(days=14)).garbage.tolist()


def test_reading_through_a_ticket_names_its_holder_as_the_reader(make_note):
    node = make_note("Read on a walk.")
    read_ticket(open_walk(node.pk, holder="agent:scout"), holder="agent:scout")
    node.refresh_from_db()
    assert (node.access_count, node.last_read_by) == (1, "agent:scout")


def test_a_step_to_a_target_that_is_not_an_id_is_refused_by_code(make_note):
    token = open_walk(make_note("Here.").pk, holder="agent")
    with pytest.raises(Invalid) as refused:
        step(token, holder="agent", direction="next", target="north")
    assert refused.value.code == "bad_target"


@pytest.mark.parametrize("token", ["", "not-a-ticket"])
def test_a_forged_ticket_is_told_it_is_not_a_walk_ticket(db, token):
    with pytest.raises(Forbidden) as refused:
        around(token, holder="agent")
    assert (refused.value.code, refused.value.message) == (
        "ticket_forged",
        "this is not a walk ticket",
    )


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


def test_another_holder_and_a_spent_ticket_are_told_why(make_note):
    here, there = make_note("Here."), make_note("There, next in the thread.")
    token = open_walk(here.pk, holder="agent")
    with pytest.raises(Forbidden) as refused:
        around(token, holder="someone-else")
    assert refused.value.message == "this ticket belongs to another holder"
    around(token, holder="agent")
    step(token, holder="agent", direction="next", target=there.pk)
    with pytest.raises(Forbidden) as refused:
        around(token, holder="agent")
    assert refused.value.message == "this ticket was already used for a step"


def test_pending_decays_in_a_domain_reach_past_the_first_chunk_of_900(lone):
    ids = [lone(f"Old page {i}.", days_old=40, domain="work").pk for i in range(901)]
    assert [i["id"] for i in pending_decays(domains=["work"])] == ids
