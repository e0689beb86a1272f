from __future__ import annotations

import math

import pytest

from memory.custody.integrity import similar_edges_duplicated
from memory.models import Edge, Node
from memory.sleep.crosslink import crosslink


def similar() -> list[tuple[int, int]]:
    return sorted(Edge.objects.filter(kind="similar").values_list("from_node_id", "to_node_id"))


def test_it_links_a_new_node_to_older_similar_ones(placed):
    a, b = placed(0), placed(10)
    result = crosslink()
    assert result["count"] == 1 and similar() == [(b.pk, a.pk)]
    edge = Edge.objects.get(kind="similar")
    assert edge.weight == pytest.approx(math.cos(math.radians(10)), abs=1e-5)


def test_crosslinking_twice_adds_no_duplicates(placed):
    for degrees in (0, 5, 10, 15):
        placed(degrees)
    first = crosslink()["count"]
    assert first > 0
    assert crosslink()["count"] == 0
    assert len(similar()) == first and similar_edges_duplicated() == []


def test_it_respects_the_cap(placed):
    for degrees in (0, 1, 2, 3, 4):
        placed(degrees)
    newest = placed(5)
    crosslink(cap=3)
    assert Edge.objects.filter(kind="similar", from_node=newest).count() == 3
    crosslink(cap=3)  # a re-run counts the edges already there
    assert Edge.objects.filter(kind="similar", from_node=newest).count() == 3


def test_it_starts_after_the_mark(placed):
    a, b = placed(0), placed(5)
    c = placed(10)
    result = crosslink(after_id=b.pk)
    assert result["nodes"] == 1 and result["through_id"] == c.pk
    assert {src for src, _ in similar()} == {c.pk}
    assert a.pk < b.pk


def test_it_skips_dissimilar_decayed_and_other_domain_nodes(placed):
    near = placed(0)
    placed(80)  # below the threshold
    gone = placed(2)
    Node.objects.filter(pk=gone.pk).update(decayed_at=near.created_at)
    placed(1, domain="work")
    newest = placed(3)
    crosslink()
    assert Edge.objects.filter(kind="similar", from_node=newest).count() == 1
    assert similar() == [(newest.pk, near.pk)]


def test_a_dry_run_adds_nothing(placed):
    placed(0), placed(5)
    assert crosslink(dry_run=True)["count"] == 1
    assert similar() == []
