"""Sleep's decay step (memory/sleep/decay.py): what it lets go (old, unread, held by nothing
that stays), what holds and spares, its batches and its re-check of what changed since the mark.
The owner's own acts and the pending list: test_forgetting.py; the mark itself: test_reach.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from memory import reach
from memory.audit import snapshot
from memory.errors import Conflict
from memory.forgetting import let_go, restore
from memory.models import Edge, Event, Node
from memory.questions import answer, plant_question
from memory.reach import mark
from memory.read import read
from memory.sleep import decay as decay_module
from memory.sleep.decay import _sweep, decay
from memory.write import write_node
from review.ceremony import seal
from tests._helpers.events import authority
from tests._helpers.nodes import chain, is_decayed


def test_it_decays_an_old_unread_unlinked_node_as_unreachable_and_snapshots_it(lone):
    node = lone("An old page nobody read.", days_old=40)
    assert node.access_count == 0 and not Edge.objects.filter(from_node=node).exists()
    assert decay()["count"] == 1
    event = Event.objects.get(node=node, kind="decayed")
    assert event.reason == "unreachable" and event.actor == "sleep"
    assert event.snapshot["excerpt"] == "An old page nobody read."
    assert event.snapshot["access_count"] == 0 and "created_at" in event.snapshot
    # The row the UPDATE returned is the node as it now is, as audit.snapshot reads it.
    assert event.snapshot == snapshot(node.pk) and event.snapshot["decayed_at"]
    node.refresh_from_db()
    assert event.at == node.decayed_at  # the flag and its event carry one instant


def test_a_chain_is_collected_once_nothing_holds_it(make_note, lone):
    p, k, g = chain(make_note, lone)
    assert Edge.objects.filter(from_node=g, to_node=k, kind="derived_from").exists()
    decay()
    assert is_decayed(p) and is_decayed(k) and is_decayed(g)


def test_an_old_unread_cluster_with_internal_edges_is_collected(make_note, lone):
    a = lone("Cluster page A.", days_old=40)
    b = make_note(
        "Cluster note B cites A.", days_old=40, origins=[{"id": a.pk, "relation": "cites"}]
    )
    c = make_note("Cluster note C on B.", days_old=40, origins=[{"id": b.pk}])
    Edge.objects.create(from_node=a, to_node=c, kind="similar", created_by="sleep")
    decay()
    assert all(is_decayed(n) for n in (a, b, c))


def test_similar_edges_do_not_hold(lone):
    old = lone("An old page.", days_old=40)
    fresh = lone("A fresh page much like it.")
    Edge.objects.create(from_node=fresh, to_node=old, kind="similar", created_by="sleep")
    decay()
    assert is_decayed(old) and not is_decayed(fresh)


@pytest.mark.parametrize("kind", ["responds_to", "consolidated_into"])
def test_sequence_and_consolidation_do_not_hold(lone, kind):
    old = lone("An old page.", days_old=40)
    fresh = lone("A fresh page after it.")
    Edge.objects.create(from_node=fresh, to_node=old, kind=kind, created_by="sleep")
    decay()
    assert is_decayed(old)


def test_a_read_leaf_holds_its_whole_provenance_chain(make_note, lone):
    p, k, g = chain(make_note, lone)
    other = lone("An unrelated old page.", days_old=40)
    read(g.pk, actor="agent:scout")
    decay()
    assert is_decayed(other)
    assert not any(is_decayed(n) for n in (p, k, g))


def test_a_held_node_does_not_hold_its_holder(make_note, lone):
    p, k, g = chain(make_note, lone)
    read(p.pk, actor="agent:scout")
    decay()
    assert not is_decayed(p) and is_decayed(k) and is_decayed(g)


def test_a_young_node_holds_what_it_derives_from(make_note, lone):
    p = lone("An old page.", days_old=40)
    young = make_note("A note written today about it.", origins=[{"id": p.pk}])
    decay()
    assert not is_decayed(p) and not is_decayed(young)


def test_it_spares_a_young_node(lone):
    node = lone("A page from last week.", days_old=7)
    control = lone("Control: an old page.", days_old=40)
    decay()
    assert is_decayed(control) and not is_decayed(node)


def test_it_spares_a_read_node(lone):
    node = lone("An old page read once.", days_old=40)
    Node.objects.filter(pk=node.pk).update(access_count=1)
    decay()
    assert not is_decayed(node)


def test_the_owners_let_go_still_decays_a_held_node(make_note, lone):
    _p, k, g = chain(make_note, lone)
    read(g.pk, actor="agent:scout")
    let_go(k.pk, actor="owner")
    decay()
    assert is_decayed(k) and not is_decayed(g)
    assert Event.objects.get(node=k, kind="decayed").reason == "owner_let_go"


def test_it_spares_a_permanent_node(lone):
    node = lone("An old permanent page.", days_old=40)
    Node.objects.filter(pk=node.pk).update(permanent=True, permanent_at=timezone.now())
    decay()
    assert not is_decayed(node)


@pytest.mark.parametrize("kind", ["rooted", "proposed", "sealed"])
def test_ground_proposed_and_sealed_nodes_are_roots(make_note, lone, kind):
    origin = lone(f"The origin of an old {kind} note.", days_old=40)
    node = make_note(f"An old {kind} note.", days_old=40, origins=[{"id": origin.pk}])
    authority(node, kind)
    decay()
    assert not is_decayed(node) and not is_decayed(origin)


def test_an_open_question_holds_its_subject_until_answered(make_note, lone):
    subject = lone("An old page a question asks about.", days_old=40)
    with time_machine.travel(timezone.now() - timedelta(days=40)):
        question = plant_question("Is it true?", about=[subject.pk], signature="owner")
    decay()
    assert not is_decayed(subject) and not is_decayed(question)
    answer(question.pk, make_note("Yes.", days_old=40, origins=[{"id": subject.pk}]).pk, actor="o")
    decay()
    assert is_decayed(subject) and is_decayed(question)


def test_it_reads_the_store_clock_not_the_referent_time(lone):
    node = lone("Fresh news about 2019.", referent_time="2019-01-01T00:00:00Z")
    assert node.referent_time.year == 2019
    decay()
    assert not is_decayed(node)


def test_a_work_cap_sweeps_holders_first(make_note, lone):
    p, k, g = chain(make_note, lone)
    assert decay(limit=1)["count"] == 1
    assert is_decayed(g) and not is_decayed(k) and not is_decayed(p)
    assert decay()["count"] == 2


def test_a_dry_run_changes_nothing(lone, counts):
    lone("An old page.", days_old=40)
    before = counts()
    assert decay(dry_run=True)["count"] == 1
    assert counts() == before


def test_rearrival_revives_the_same_node_with_its_trail(lone):
    node = lone("Content that comes back.", days_old=40)
    decay()
    assert is_decayed(node)
    again = write_node(
        body="Content that comes back.",
        kind="internet",
        jurisdiction="wild",
        signature="agent",
        source="https://example.org/page",
    )
    assert again.status == "revived" and again.node.pk == node.pk
    assert again.node.decayed_at is None
    trail = list(Event.objects.filter(node=node).order_by("id").values_list("kind", flat=True))
    assert trail == ["arrived", "decayed", "revived"]


def test_the_sweep_rechecks_under_the_lock(make_note, lone):
    node = lone("Read between mark and sweep.", days_old=40)
    held = lone("Held by a new edge between mark and sweep.", days_old=40)
    found = mark(timezone.now() - timedelta(days=14))
    assert set(found.garbage.tolist()) >= {node.pk, held.pk}
    Node.objects.filter(pk=node.pk).update(access_count=1)
    make_note("A new note citing it.", origins=[{"id": held.pk, "relation": "cites"}])
    done, _ = _sweep(
        [node.pk, held.pk],
        cutoff=timezone.now() - timedelta(days=14),
        since=timezone.now(),
        edge_mark=found.edge_mark,
        edges=found.edges,
    )
    assert done == [] and not is_decayed(node) and not is_decayed(held)


def test_a_new_derivation_from_a_decayed_origin_is_refused_and_writes_nothing(make_note, lone):
    """A new note would be a young root holding a decayed node: the write names the origin."""
    origin = lone("A page nobody kept.", days_old=40)
    decay()
    assert is_decayed(origin)
    before = Node.objects.count()
    with pytest.raises(Conflict) as refused:
        make_note("A note on the forgotten page.", origins=[{"id": origin.pk}])
    assert refused.value.code == "decayed_origin" and str(origin.pk) in str(refused.value)
    assert Node.objects.count() == before


def test_a_revived_note_brings_back_what_it_holds(make_note, lone):
    """The same words arriving again revive a decayed page; its provenance chain comes with it,
    so no live node holds a decayed one."""
    p = lone("P: the origin page.", days_old=40)
    k = make_note("K: a note on P.", days_old=40, origins=[{"id": p.pk}])
    g = lone("G: a page that cites K.", days_old=40, origins=[{"id": k.pk, "relation": "cites"}])
    decay()
    assert is_decayed(p) and is_decayed(k) and is_decayed(g)
    again = write_node(
        body=g.body,
        kind=g.kind,
        jurisdiction=g.jurisdiction,
        signature="agent:scout",
        source="https://example.org/page",
    )
    assert again.status == "revived" and again.node.pk == g.pk
    assert not is_decayed(g) and not is_decayed(k) and not is_decayed(p)
    revived = Event.objects.filter(kind="restored", node__in=[k, p])
    assert sorted(revived.values_list("reason", flat=True)) == ["held_by_revived"] * 2
    assert set(revived.values_list("related_node_id", flat=True)) == {g.pk}


def test_one_read_marks_each_cutoff_as_its_own_mark_does(make_note, lone, monkeypatch):
    held = lone("Old, held by a note ten days old.", days_old=40)
    make_note("Ten days old.", days_old=10, origins=[{"id": held.pk}])
    lone("Twelve days old.", days_old=12)
    now = timezone.now()
    cutoffs = [now - timedelta(days=14), now - timedelta(days=9)]
    alone = [set(mark(c).garbage.tolist()) for c in cutoffs]
    assert alone[0] != alone[1]
    assert [set(m.garbage.tolist()) for m in reach.marks(cutoffs)] == alone
    monkeypatch.setattr(reach, "_PAIR", 1)  # ids too big to pack: the edges load row by row
    assert [set(m.garbage.tolist()) for m in reach.marks(cutoffs)] == alone


def test_the_sweep_spares_a_node_the_owner_restored_since_the_mark(lone):
    node = lone("Let go and restored between mark and sweep.", days_old=40)
    found = mark(timezone.now() - timedelta(days=14))
    assert node.pk in found.garbage.tolist()
    let_go(node.pk, actor="owner")
    restore(node.pk, actor="owner")
    cutoff = timezone.now() - timedelta(days=14)
    since = timezone.now() - timedelta(minutes=1)
    done, _ = _sweep(
        [node.pk], cutoff=cutoff, since=since, edge_mark=found.edge_mark, edges=found.edges
    )
    assert done == [] and not is_decayed(node)


def test_an_old_unread_holding_cycle_is_collected(lone):
    a, b = lone("Cites b.", days_old=40), lone("Cites a.", days_old=40)
    Edge.objects.create(from_node=a, to_node=b, kind="cites", created_by="sleep")
    Edge.objects.create(from_node=b, to_node=a, kind="cites", created_by="sleep")
    assert decay()["count"] == 2
    assert is_decayed(a) and is_decayed(b)


def test_a_sparing_event_without_a_node_does_not_stop_the_sweep(lone):
    """The sweep's re-check is a NOT IN list of nodes with sparing events since the mark: one
    such event with no node (a NULL in the list) would make it spare every node."""
    node = lone("Nothing holds this.", days_old=40)
    found = mark(timezone.now() - timedelta(days=14))
    since = timezone.now() - timedelta(minutes=1)
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail)
               VALUES (%s, 'kept', NULL, 'owner', 'owner_keep', '{}', '{}')""",
            [timezone.now()],
        )
    assert Event.objects.filter(kind="kept", node__isnull=True).exists()
    cutoff = timezone.now() - timedelta(days=14)
    done, _ = _sweep(
        [node.pk], cutoff=cutoff, since=since, edge_mark=found.edge_mark, edges=found.edges
    )
    assert done == [node.pk] and is_decayed(node)


@pytest.mark.parametrize("batch", [5000, 1])  # the holder in the same batch, or an earlier one
def test_a_holder_read_between_mark_and_sweep_keeps_what_it_holds(
    make_note, lone, monkeypatch, batch
):
    """The sweep spares a node read since the mark; what that node holds stays live with it, or
    a live node would hold a decayed one."""

    p, k, g = chain(make_note, lone)
    real_mark = reach.mark

    def mark_then_read(cutoff):
        found = real_mark(cutoff)
        assert {p.pk, k.pk, g.pk} <= set(found.garbage.tolist())  # all three unreachable
        read(k.pk, actor="agent:scout")
        return found

    monkeypatch.setattr(reach, "mark", mark_then_read)
    monkeypatch.setattr(decay_module, "BATCH", batch)
    assert decay()["count"] == 1
    assert is_decayed(g)
    assert not is_decayed(k) and not is_decayed(p)


def test_decay_takes_the_age_it_is_given_over_the_setting(lone):
    node = lone("Twenty days old.", days_old=20)
    assert decay(min_age_days=30)["count"] == 0
    assert not is_decayed(node)
    assert decay()["count"] == 1


def test_decay_spares_a_node_sealed_between_its_mark_and_its_sweep(lone, monkeypatch):
    node = lone("Sealed while the sleep runs.", days_old=40)
    order = reach.holders_first

    def seal_then_order(garbage, edges):
        seal(node.pk, owner="owner")  # after the mark, before the sweep
        return order(garbage, edges)

    monkeypatch.setattr(reach, "holders_first", seal_then_order)
    assert decay()["count"] == 0
    assert not is_decayed(node)


def test_decay_with_a_limit_of_zero_or_less_sweeps_nothing(lone):
    node = lone("Unreachable, old.", days_old=40)
    for limit in (0, -1):
        assert decay(limit=limit)["count"] == 0
    assert not is_decayed(node)


def test_decay_reports_progress_once_per_batch(lone):
    lone("Unreachable one.", days_old=40), lone("Unreachable two.", days_old=40)
    beats: list[dict] = []
    decay(beat=lambda **fields: beats.append(fields))
    assert beats == [
        {"count": 2, "candidates": 2, "unreachable": 2, "live": 3, "held_back": 0, "released": 0}
    ]


def test_decay_spares_a_node_held_anew_after_its_mark(make_note, lone, monkeypatch):
    node = lone("Cited while the sleep runs.", days_old=40)
    order = reach.holders_first

    def cite_then_order(garbage, edges):
        make_note("A young note citing it.", origins=[{"id": node.pk, "relation": "cites"}])
        return order(garbage, edges)

    monkeypatch.setattr(reach, "holders_first", cite_then_order)
    assert decay()["count"] == 0
    assert not is_decayed(node)


def test_a_batch_flagged_again_still_spares_what_was_restored_or_newly_held_since_the_mark(
    make_note, lone
):
    # A read holder in the batch sends the sweep down its second pass (the batch flagged again
    # without what the holder holds); that pass re-checks as the first does (decay._sweep 33, 34).
    origin = lone("Held by a holder read since the mark.", days_old=40)
    holder = make_note("Derived from it.", days_old=40, origins=[{"id": origin.pk}])
    restored = lone("Let go and restored since the mark.", days_old=40)
    cited = lone("Cited by a note written since the mark.", days_old=40)
    cutoff = timezone.now() - timedelta(days=14)
    found = reach.mark(cutoff)
    batch = [origin.pk, holder.pk, restored.pk, cited.pk]
    assert set(batch) <= set(found.garbage.tolist())
    since = timezone.now() - timedelta(seconds=1)
    read(holder.pk, actor="agent:scout")
    let_go(restored.pk, actor="owner")
    restore(restored.pk, actor="owner")
    make_note("New, citing it.", origins=[{"id": cited.pk, "relation": "cites"}])

    done, spared = _sweep(
        batch, cutoff=cutoff, since=since, edge_mark=found.edge_mark, edges=found.edges
    )

    assert done == [] and spared >= {holder.pk, origin.pk}
    assert not any(is_decayed(node) for node in (origin, holder, restored, cited))


def test_what_a_spared_holder_holds_stays_spared_past_a_batch_that_spares_nothing(
    make_note, lone, monkeypatch
):
    # One node a batch, holders first: g, r, then k (read since the mark: spared with p, which
    # it holds), then q (spares nothing), then p. The spared set carries across batches
    # (decay.decay 55 kept only the last batch's).
    p, k, g = chain(make_note, lone)
    q = lone("Another old page.", days_old=40)
    r = make_note("Derived from it.", days_old=40, origins=[{"id": q.pk}])
    real_mark = reach.mark

    def mark_then_read(cutoff):
        found = real_mark(cutoff)
        order = reach.holders_first(found.garbage, found.edges)
        assert order == [g.pk, r.pk, k.pk, q.pk, p.pk]  # the fixture's batches, in order
        read(k.pk, actor="agent:scout")
        return found

    monkeypatch.setattr(reach, "mark", mark_then_read)
    monkeypatch.setattr(decay_module, "BATCH", 1)

    assert decay()["count"] == 3
    assert [is_decayed(n) for n in (g, r, k, q, p)] == [True, True, False, True, False]


def _long_chain(make_note, lone, length: int = 6) -> list[Node]:
    """n0 <- n1 <- ... : each derived from the one before, all old and unread."""
    nodes = [lone("Link 0: the origin page.", days_old=40)]
    for i in range(1, length):
        nodes.append(
            make_note(f"Link {i} on link {i - 1}.", days_old=40, origins=[{"id": nodes[-1].pk}])
        )
    return nodes


@pytest.mark.parametrize("batch", [5000, 1])
def test_a_holder_read_since_the_mark_spares_its_chain_all_the_way_down(
    make_note, lone, monkeypatch, batch
):
    links = _long_chain(make_note, lone)
    real_mark = reach.mark

    def mark_then_read(cutoff):
        found = real_mark(cutoff)
        assert {n.pk for n in links} <= set(found.garbage.tolist())
        read(links[-1].pk, actor="agent:scout")
        return found

    monkeypatch.setattr(reach, "mark", mark_then_read)
    monkeypatch.setattr(decay_module, "BATCH", batch)
    decay()
    assert [is_decayed(n) for n in links] == [False] * len(links)


def test_holdings_follow_the_holding_edges_to_the_end():
    import numpy as np

    src = np.array([6, 5, 4, 3, 2], dtype=np.int64)  # 6 holds 5 holds 4 ... holds 1
    dst = np.array([5, 4, 3, 2, 1], dtype=np.int64)
    assert reach.holdings({6}, (src, dst)) == {1, 2, 3, 4, 5, 6}
    assert reach.holdings({3}, (src, dst)) == {1, 2, 3}


def test_restoring_the_top_of_a_long_chain_restores_it_all_the_way_down(make_note, lone):
    links = _long_chain(make_note, lone)
    decay()
    assert all(is_decayed(n) for n in links)  # the fixture forgot the whole chain
    restore(links[-1].pk, actor="owner")
    assert [is_decayed(n) for n in links] == [False] * len(links)
