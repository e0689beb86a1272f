"""The mark reads only the holding edges into its candidates (memory/reach.py): every live
node that is not a candidate is a root, so an edge into one changes no mark."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memory import reach
from memory.models import Edge, EdgeKind
from tests._helpers.plans import plans


def test_only_the_edges_into_old_unread_nodes_are_read(make_note, lone):
    old = lone("An old page.", days_old=40)
    young = lone("A young page.")
    young_child = make_note("Derived from the young page.", origins=[{"id": young.pk}])
    holder = make_note("Derived from the old page.", origins=[{"id": old.pk}])
    cutoff = timezone.now() - timedelta(days=14)
    edges = Edge.objects.filter(kind=EdgeKind.DERIVED_FROM).values_list("from_node", "to_node")
    assert (young_child.pk, young.pk) in set(edges), "the fixture holds an edge into a root"

    src, dst, _ = reach.holding_edges(cutoff)

    assert set(zip(src.tolist(), dst.tolist(), strict=True)) == {(holder.pk, old.pk)}
    assert reach.mark(cutoff).garbage.tolist() == []  # the young holder still holds it


def test_a_chain_of_old_unread_nodes_is_held_through_every_link(make_note, lone):
    """Edges between candidates are read too: a young leaf holds its old chain to the top."""
    top = lone("Old origin.", days_old=40)
    middle = make_note("Old, derived from the origin.", days_old=40, origins=[{"id": top.pk}])
    leaf = make_note("Young, derived from the middle.", origins=[{"id": middle.pk}])
    cutoff = timezone.now() - timedelta(days=14)

    src, dst, _ = reach.holding_edges(cutoff)

    assert set(zip(src.tolist(), dst.tolist(), strict=True)) == {
        (leaf.pk, middle.pk),
        (middle.pk, top.pk),
    }
    assert reach.mark(cutoff).garbage.tolist() == []


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner, without statistics")
def test_the_edges_are_read_one_seek_a_candidate(make_note, lone):
    """The candidates drive (CROSS JOIN), and each is one seek on to_node alone (`+kind`), not
    one per holding kind."""
    old = lone("An old page.", days_old=40)
    make_note("Derived from the old page.", origins=[{"id": old.pk}])
    (joined,) = plans(
        lambda: reach.holding_edges(timezone.now() - timedelta(days=14)), "JOIN memory_edge"
    )
    plan = joined.split(" | ")
    assert len(plan) == 2, plan
    assert plan[0] == "SEARCH n USING INDEX memory_node_decay_candidates (created_at<?)", plan
    assert plan[1].startswith("SEARCH e USING ") and plan[1].endswith("(to_node_id=?)"), plan
