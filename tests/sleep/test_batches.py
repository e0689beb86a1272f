"""Acts on many nodes as one batch on the record (memory/batches.py), and their undo."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from memory import batches
from memory.audit import snapshot
from memory.custody.integrity import run_checks
from memory.errors import Conflict
from memory.models import Event, EventKind, Node
from review.ceremony import root, seal
from tests._helpers.vendor import drop_trigger


def _many(lone, n: int) -> list[int]:
    return [lone(f"turn {i}: an old line nobody read.", days_old=40).pk for i in range(n)]


def test_a_let_go_of_300_undone_as_a_batch_leaves_each_node_as_it_was(lone):
    ids = _many(lone, 300)
    before = {i: snapshot(i) for i in ids}
    done = batches.let_go_many(ids, actor="owner", words="domain home")
    assert Node.objects.filter(pk__in=ids, decayed_at__isnull=False).count() == 300
    undone = batches.undo(done.batch, actor="owner")
    assert len(undone.done) == 300
    assert {i: snapshot(i) for i in ids} == before
    assert len(batches.batch_events(done.batch)) == 300
    restored = batches.batch_events(undone.batch)
    assert {e.kind for e in restored} == {EventKind.RESTORED}
    assert {e.detail["undoes"] for e in restored} == {done.batch}
    assert all(result.ok for result in run_checks(full_chain=True))


def test_the_batch_id_is_on_the_chain(lone):
    done = batches.let_go_many(_many(lone, 2), actor="owner", words="two")
    event = batches.batch_events(done.batch)[0]
    drop_trigger("memory_event_no_update")  # rolled back with the test
    Event.objects.filter(pk=event.pk).update(detail={**event.detail, "batch": "0" * 16})
    assert not all(result.ok for result in run_checks(["hash_chain"], full_chain=True))


def test_undo_refuses_after_the_window(lone):
    done = batches.let_go_many(_many(lone, 2), actor="owner", words="two")
    with pytest.raises(Conflict) as refused:
        batches.undo(done.batch, actor="owner", now=timezone.now() + timedelta(days=1, seconds=1))
    assert refused.value.code == "undo_window"


def test_undo_runs_once(lone):
    done = batches.let_go_many(_many(lone, 2), actor="owner", words="two")
    batches.undo(done.batch, actor="owner")
    with pytest.raises(Conflict) as refused:
        batches.undo(done.batch, actor="owner")
    assert refused.value.code == "undone"


def test_undo_skips_a_node_sealed_since(lone):
    a, b = _many(lone, 2)
    done = batches.let_go_many([a, b], actor="owner", words="two")
    with time_machine.travel(timezone.now() + timedelta(seconds=1)):
        seal(b, owner="owner", reason="private")
        undone = batches.undo(done.batch, actor="owner")
    assert undone.done == [a]
    assert b in undone.skipped
    assert Node.objects.get(pk=b).decayed_at is not None


def test_a_let_go_batch_leaves_ground_as_it_was(lone):
    a, b = _many(lone, 2)
    node = Node.objects.get(pk=b)
    root(b, adopting_words="mine", expected_body_hash=node.body_hash, owner="owner")
    done = batches.let_go_many([a, b], actor="owner", words="two")
    assert done.done == [a]
    assert done.skipped == {b: "ground"}


def _swept(*nodes: Node) -> None:
    from memory import audit
    from memory.models import DecayReason

    for node in nodes:
        Node.objects.filter(pk=node.pk).update(decayed_at=timezone.now())
        audit.record(EventKind.DECAYED, node=node.pk, actor="sleep", reason=DecayReason.UNREACHABLE)


def test_a_restore_of_many_brings_back_what_they_hold_in_the_batch_and_its_undo_too(
    lone, make_note
):
    source = lone("An imported page.", days_old=40)
    turn = make_note("A line from it.", days_old=40, origins=[{"id": source.pk}])
    _swept(turn, source)
    done = batches.restore_many([turn.pk], actor="owner", words="every forgotten node")
    assert set(Node.objects.filter(decayed_at__isnull=True).values_list("id", flat=True)) >= {
        turn.pk,
        source.pk,
    }
    assert {e.node_id for e in batches.batch_events(done.batch)} == {turn.pk, source.pk}
    batches.undo(done.batch, actor="owner")
    assert Node.objects.filter(pk__in=[turn.pk, source.pk], decayed_at__isnull=True).count() == 0
