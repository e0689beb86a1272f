"""Sleep's mark, sweep and promotion, and the walk: behaviours the mutation runs of issue 16
found untested (docs/mutation.md, round 3). Each test is named for the behaviour it pins."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from memory.errors import Forbidden, Invalid
from memory.models import Edge, Node
from memory.sleep import reach
from memory.sleep.decay import let_go, restore
from memory.sleep.reach import candidates, holders_first, mark
from memory.walk import around, open_walk, read_ticket, step
from tests.test_decay import lone  # noqa: F401  (a fixture)


def test_candidates_are_the_old_unread_nodes_no_event_holds(lone):  # noqa: F811
    old = sorted(lone(f"Old page {i}.", days_old=40).pk for i in range(3))
    restored = lone("Old, let go and restored by the owner.", days_old=40)
    let_go(restored.pk, actor="owner")
    restore(restored.pk, actor="owner")
    lone("Young page.", days_old=1)
    assert candidates(timezone.now() - timedelta(days=14)).tolist() == old


def test_holders_first_ignores_holders_outside_the_garbage():
    # 1 (live) holds 3, 3 holds 2; only 2 and 3 are garbage: 3 is free at once, then 2.
    assert holders_first(np.array([2, 3]), (np.array([1, 3]), np.array([3, 2]))) == [3, 2]


def test_an_edge_into_the_highest_id_at_the_packing_bound_loads_row_by_row(lone, monkeypatch):  # noqa: F811
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
