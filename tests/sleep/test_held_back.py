"""What the guard on mass forgetting held back, as the owner's pages read it (memory/forgetting.py
held_back) and the release's record (release_held): read from the last real, finished run that
ran its decay step, gone once the owner releases it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory import audit
from memory.errors import Conflict
from memory.forgetting import held_back, release_held
from memory.models import EventKind, Node, SleepRun, SleepStatus


def _run(*, held: int | None, live: int = 40, ago: float = 1, **fields) -> SleepRun:
    """A sleep run `ago` hours back; `held` None: it did not run the decay step."""
    steps = {"links": {"count": 0}}
    if held is not None:
        steps["decay"] = {"count": 0, "held_back": held, "live": live}
    started = timezone.now() - timedelta(hours=ago)
    fields.setdefault("status", SleepStatus.DONE)
    if fields["status"] in (SleepStatus.DONE, SleepStatus.FAILED):
        fields.setdefault("finished_at", started + timedelta(minutes=1))
    return SleepRun.objects.create(started_at=started, steps=steps, **fields)


def test_the_last_runs_hold_back_is_said_with_its_share_of_live(db):
    run = _run(held=12, live=13)
    assert held_back() == {"count": 12, "live": 13, "share": 0.923, "run": run.pk}


def test_a_decay_step_recorded_before_the_guard_existed_held_nothing_back(db):
    run = _run(held=None)
    run.steps["decay"] = {"count": 3, "live": 40}  # no held_back: the guard came later
    run.save()
    assert held_back() is None


def test_a_run_without_the_decay_step_is_passed_over_for_the_one_before(db):
    earlier = _run(held=7, ago=3)
    _run(held=None, ago=1)
    found = held_back()
    assert found is not None and (found["run"], found["count"]) == (earlier.pk, 7)


@pytest.mark.parametrize(
    "later",
    [
        {"held": 0},  # a later decay step held nothing: the earlier hold is over
        {"held": 0, "ago": 2},  # by id, not by time: the later run is the one created last
    ],
)
def test_a_later_run_that_held_nothing_back_ends_it(db, later):
    _run(held=7, ago=3)
    _run(**later)
    assert held_back() is None


@pytest.mark.parametrize(
    "fields",
    [{"dry_run": True}, {"status": SleepStatus.FAILED}, {"status": SleepStatus.RUNNING}],
)
def test_only_a_real_finished_run_holds_anything_back(db, fields):
    _run(held=7, **fields)
    assert held_back() is None
    kept = _run(held=5, ago=4)  # created later, but started earlier: a real one is read
    assert held_back()["run"] == kept.pk  # type: ignore[index]


def test_the_last_twenty_runs_are_read_and_no_more(db):
    _run(held=7, ago=30)
    for i in range(19):
        _run(held=None, ago=20 - i)
    assert held_back()["count"] == 7  # type: ignore[index]
    _run(held=None, ago=0.5)  # now twenty without the step are later
    assert held_back() is None


def test_a_release_since_the_run_started_ends_it_one_before_does_not(db):
    run = _run(held=7, ago=2)
    event = audit.record(
        EventKind.DECAYS_RELEASED, node=None, actor="owner", reason="owner_release", detail={}
    )
    assert held_back() is None
    SleepRun.objects.filter(pk=run.pk).update(started_at=event.at + timedelta(seconds=1))
    assert held_back()["run"] == run.pk  # type: ignore[index]
    SleepRun.objects.filter(pk=run.pk).update(started_at=event.at)
    assert held_back() is None


def test_the_release_records_what_is_pending_the_hold_the_last_id_and_the_run(lone):
    pages = [lone(f"Old page {i}.", days_old=40) for i in range(3)]
    young = lone("A young page.")
    run = _run(held=5, live=6)
    event = release_held(actor="owner")
    assert (event.kind, event.actor, event.reason, event.node_id) == (
        EventKind.DECAYS_RELEASED,
        "owner",
        "owner_release",
        None,
    )
    assert event.detail == {
        "count": len(pages),
        "held_back": 5,
        "through_node": young.pk,
        "run": run.pk,
    }
    assert young.pk == Node.objects.order_by("-id").first().pk  # type: ignore[union-attr]
    with pytest.raises(Conflict) as again:
        release_held(actor="owner")
    assert again.value.code == "none_held"


def test_a_release_in_an_empty_store_goes_through_no_node(db):
    run = _run(held=5)
    assert release_held(actor="owner").detail == {
        "count": 0,
        "held_back": 5,
        "through_node": 0,
        "run": run.pk,
    }
