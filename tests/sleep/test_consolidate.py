from __future__ import annotations

from django.utils import timezone

from memory.models import Edge, Event, Node
from memory.sleep.consolidate import consolidate
from memory.sleep.crosslink import crosslink


def live(*nodes: Node) -> list[bool]:
    return [Node.objects.get(pk=n.pk).decayed_at is None for n in nodes]


def sleep_once() -> dict:
    crosslink()
    return consolidate()


def test_a_clique_merges_into_the_most_read(placed):
    a, b, c = placed(0), placed(3), placed(6)
    Node.objects.filter(pk=c.pk).update(access_count=4)
    result = sleep_once()
    assert result["count"] == 2 and live(a, b, c) == [False, False, True]
    for loser in (a, b):
        event = Event.objects.get(node=loser, kind="decayed")
        assert event.reason == "consolidated" and event.related_node_id == c.pk
        assert Edge.objects.filter(from_node=loser, to_node=c, kind="consolidated_into").exists()


def test_with_reads_tied_the_oldest_keeps(placed):
    old, new = placed(0), placed(3)
    sleep_once()
    assert live(old, new) == [True, False]


def test_a_chain_is_no_three_way_merge(placed):
    # cos 20 deg = 0.94 >= 0.92, cos 40 deg = 0.77: A~B, B~C, A !~ C.
    a, b, c = placed(0), placed(20), placed(40)
    Node.objects.filter(pk=b.pk).update(access_count=5)
    result = sleep_once()
    strong = Edge.objects.filter(kind="similar", weight__gte=0.92)
    assert sorted(strong.values_list("from_node_id", "to_node_id")) == [(b.pk, a.pk), (c.pk, b.pk)]
    assert result["count"] == 1 and live(a, b, c) == [False, True, True]


def test_two_protected_duplicates_stay(placed):
    a, b = placed(0), placed(3)
    Node.objects.filter(pk__in=[a.pk, b.pk]).update(permanent=True, permanent_at=timezone.now())
    assert sleep_once()["count"] == 0 and live(a, b) == [True, True]


def test_a_permanent_node_is_the_keeper_even_when_read_less(placed):
    perm, read = placed(0), placed(3)
    Node.objects.filter(pk=perm.pk).update(permanent=True, permanent_at=timezone.now())
    Node.objects.filter(pk=read.pk).update(access_count=9)
    sleep_once()
    assert live(perm, read) == [True, False]
    assert Node.objects.get(pk=perm.pk).permanent


def test_occurrences_are_never_consolidated(placed):
    a = placed(0, body="Imported file one.", kind="import", jurisdiction="wild", source="a.md")
    b = placed(1, body="Imported file two.", kind="import", jurisdiction="wild", source="b.md")
    assert sleep_once()["count"] == 0 and live(a, b) == [True, True]


def test_different_domains_never_merge(placed):
    a, b = placed(0), placed(3, domain="work")
    assert sleep_once()["count"] == 0 and live(a, b) == [True, True]


def test_different_kinds_never_merge(placed):
    journal, inference = placed(0, kind="journal"), placed(3, kind="inference")
    assert [journal.kind, inference.kind] == ["journal", "inference"]
    assert sleep_once()["count"] == 0 and live(journal, inference) == [True, True]


def test_a_dry_run_merges_nothing(placed, counts):
    placed(0), placed(3)
    crosslink()
    before = counts()
    assert consolidate(dry_run=True)["count"] == 1
    assert counts() == before


def test_it_starts_after_the_edge_mark(placed):
    a, b = placed(0), placed(3)
    crosslink()
    mark = Edge.objects.filter(kind="similar").latest("id").pk
    assert consolidate(after_edge_id=mark)["count"] == 0 and live(a, b) == [True, True]
