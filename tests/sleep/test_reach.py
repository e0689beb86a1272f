"""Reachability (memory/reach.py): the candidates for decay, the holding edges and the mark over
them, holders first, what a spared node holds, and the decayed nodes a restore brings back."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory import reach
from memory.forgetting import let_go, pending_decays, restore
from memory.models import Edge, Node
from memory.reach import _held_decayed, candidates, holders_first, holdings


def test_the_restore_walk_stops_once_it_has_seen_5000_nodes(lone):
    # The holder and 4,999 decayed nodes it cites make 5,000 seen after one level: the walk
    # stops there, and the node one level further stays out of the chain.
    holder, gone = lone("Holds many."), timezone.now()
    rows = [
        Node(
            body=f"Cited {i}.",
            body_hash=f"{i:064x}",
            content_key=f"{i:064x}",
            kind="internet",
            jurisdiction="wild",
            signature="bench",
            decayed_at=gone,
        )
        for i in range(5_000)
    ]
    cited = Node.objects.bulk_create(rows)
    further, first = cited.pop(), cited[0]
    edges = [Edge(from_node=holder, to_node=n, kind="cites", created_by="bench") for n in cited]
    edges.append(Edge(from_node=first, to_node=further, kind="cites", created_by="bench"))
    Edge.objects.bulk_create(edges)
    assert _held_decayed(first.pk) == [further.pk]  # one level further, when it is reached
    assert _held_decayed(holder.pk) == sorted(n.pk for n in cited)


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
    assert cited.pk not in reach.mark(timezone.now() - timedelta(days=14)).garbage.tolist()


def test_a_decayed_node_past_every_candidate_and_holder_does_not_break_the_mark(make_note, lone):
    # The mark's masks are sized by the candidates and the holders; a decayed node may sit
    # just past them (reach.marks 56: `decayed <= size` indexed one past the mask).
    old = make_note("Old and unread.", days_old=400)
    lone("Young, no edges.")
    past = lone("Young, no edges, let go.")
    let_go(past.pk, actor="owner")
    cutoff = timezone.now() - timedelta(days=14)
    src, _, _ = reach.holding_edges(cutoff)
    holders = int(src.max()) if len(src) else 0
    assert past.pk == max(old.pk, holders) + 2  # the fixture reaches the mask's edge

    found = reach.mark(cutoff)

    assert old.pk in found.garbage.tolist()
    assert past.pk not in found.candidates.tolist()


def test_holdings_compare_ids_exactly_past_two_to_the_53():
    # 2**53 + 1 has no float64 of its own: read as a float it would equal 2**53.
    edges = (np.array([2**53], dtype=np.int64), np.array([7], dtype=np.int64))
    assert holdings({2**53 + 1}, edges) == {2**53 + 1}
    assert holdings({2**53}, edges) == {2**53, 7}


@pytest.mark.sqlite_only  # SQLite takes a partial index only when the query repeats its terms
def test_the_candidates_read_can_use_the_partial_decay_index(lone):
    old = lone("Old and unread.", days_old=40)
    with CaptureQueriesContext(connection) as queries:
        found = reach.candidates(timezone.now() - timedelta(days=14))
    assert found.tolist() == [old.pk]
    (read,) = [q["sql"] for q in queries.captured_queries if "access_count = 0" in q["sql"]]
    # INDEXED BY fails ("no query solution") when the WHERE does not imply the index's terms.
    forced = read.replace(
        "FROM memory_node n", "FROM memory_node n INDEXED BY memory_node_decay_candidates"
    )
    assert forced != read, read
    with connection.cursor() as cursor:
        cursor.execute(forced)
        assert cursor.fetchone()[0] == str(old.pk * 2 + 1)  # the id, and old at the one cutoff


def test_a_held_node_does_not_hold_what_holds_it(make_note, lone):
    # A young note holds the old page; an old note derived from the same page holds the page
    # too, but nothing holds that note: holding runs one way, holder to held.
    page = lone("Old page.", days_old=40)
    make_note("Young, derived from the old page.", origins=[{"id": page.pk}])
    orphan = make_note("Old, derived from the old page.", days_old=40, origins=[{"id": page.pk}])

    found = reach.mark(timezone.now() - timedelta(days=14))

    assert found.garbage.tolist() == [orphan.pk]


def test_nothing_will_decay_within_a_day_where_every_node_is_young(lone):
    lone("Young page.")
    assert pending_decays(within_days=1) == []
