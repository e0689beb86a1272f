from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import IntegrityError
from django.utils import timezone

from memory.errors import Conflict, Invalid
from memory.models import Edge, Node, SleepRun, Vector
from memory.sleep.run import STEPS, ensure_schedule, request_sleep, run_sleep


@pytest.fixture
def notes(make_note):
    return [make_note(f"Garden note {i}: the tomatoes need staking by June.") for i in range(6)]


def running_run(*, beat_age: timedelta = timedelta(0), pid: int | None = None) -> SleepRun:
    at = timezone.now() - beat_age
    worker = {"pid": pid or os.getpid(), "host": os.uname().nodename}
    return SleepRun.objects.create(
        status="running", started_at=at, heartbeat_at=at, steps={"_worker": worker}
    )


def test_a_full_run_records_every_step(notes):
    run = run_sleep(requested_by="test")
    assert run.status == "done" and run.finished_at and run.started_at
    # Sorted: PostgreSQL's jsonb keeps no key order (the sleep page lists steps in STEPS order).
    assert sorted(s for s in run.steps if not s.startswith("_")) == sorted(STEPS)
    assert all("count" in run.steps[s] and "ms" in run.steps[s] for s in STEPS)
    assert run.steps["embed"]["count"] == Node.objects.count()
    assert Vector.objects.count() == Node.objects.count()


def test_a_dry_run_changes_nothing(notes, counts):
    before = counts()
    run = run_sleep(requested_by="test", dry_run=True)
    assert run.status == "done" and run.dry_run
    assert run.steps["embed"]["count"] == len(notes) + 1  # what it would embed
    assert counts() == before


def test_the_second_run_is_incremental(notes, make_note):
    run_sleep(requested_by="test")
    make_note("A new thought about staking tomatoes by June.")
    run = run_sleep(requested_by="test")
    assert run.steps["embed"]["count"] == 1 and run.steps["crosslink"]["nodes"] == 1


def test_only_step_runs_one_step(notes):
    run = run_sleep(requested_by="test", only_step="embed")
    assert [s for s in run.steps if not s.startswith("_")] == ["embed"]


def test_it_refuses_an_unknown_step(db):
    with pytest.raises(Invalid, match="unknown sleep step"):
        run_sleep(requested_by="test", only_step="dream")
    assert not SleepRun.objects.exists()


def test_max_nodes_caps_the_work(notes):
    run = run_sleep(requested_by="test", max_nodes=2, only_step="embed")
    assert run.steps["embed"]["count"] == 2 and run.steps["embed"]["complete"] is False


def test_a_second_run_while_one_runs_is_told_so(notes):
    running = running_run()
    with pytest.raises(Conflict, match="already running") as refused:
        run_sleep(requested_by="test")
    assert refused.value.code == "sleep_running"
    with pytest.raises(Conflict, match=f"run {running.pk}"):
        request_sleep(requested_by="owner")


def test_the_database_allows_one_running_run(db):
    running_run()
    with pytest.raises(IntegrityError):
        SleepRun.objects.create(status="running")


def test_a_run_with_a_stale_heartbeat_is_marked_failed(notes):
    dead = running_run(beat_age=timedelta(minutes=10))
    run = run_sleep(requested_by="test")
    dead.refresh_from_db()
    assert run.status == "done" and dead.status == "failed"
    assert "worker died mid-run" in dead.error and dead.finished_at


def test_a_run_whose_process_is_gone_is_marked_failed(notes):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = running_run(pid=gone.pid)
    run_sleep(requested_by="test")
    dead.refresh_from_db()
    assert dead.status == "failed" and "process gone" in dead.error


def test_a_claimed_run_cannot_be_claimed_again(notes):
    run = run_sleep(requested_by="test")
    with pytest.raises(Conflict, match="not queued") as refused:
        run_sleep(run=run)
    assert refused.value.code == "sleep_not_queued"


def test_request_sleep_enqueues_after_commit(notes, django_capture_on_commit_callbacks):
    from django_q.conf import Conf

    Conf.SYNC, was = True, Conf.SYNC
    try:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            run = request_sleep(requested_by="owner")
        assert len(callbacks) == 1 and SleepRun.objects.get(pk=run.pk).status == "queued"
        callbacks[0]()  # the commit: the task runs (synchronously here)
    finally:
        Conf.SYNC = was
    run.refresh_from_db()
    assert run.status == "done" and run.requested_by == "owner"


def test_the_schedule_is_created_once(db):
    from django_q.models import Schedule

    first, second = ensure_schedule(), ensure_schedule()
    assert first.pk == second.pk and Schedule.objects.count() == 1
    assert first.func == "memory.tasks.scheduled_sleep" and first.next_run > timezone.now()
    assert (first.next_run.hour, first.next_run.minute) == (3, 30)


def test_the_schedule_refuses_a_malformed_cron(db):
    from django_q.models import Schedule

    with pytest.raises(Invalid, match="not a cron expression"):
        ensure_schedule(cron="every night please")
    assert Schedule.objects.count() == 0


def test_the_schedule_follows_a_changed_cron(db):
    first = ensure_schedule()
    second = ensure_schedule(cron="*/5 * * * *")
    assert second.pk == first.pk and second.cron == "*/5 * * * *"
    assert second.next_run.minute % 5 == 0


def test_the_command_runs_a_dry_run(notes, counts):
    before, out = counts(), StringIO()
    call_command("sleep", "--dry-run", stdout=out)
    assert "done" in out.getvalue() and '"embed"' in out.getvalue()
    assert counts() == before


def test_the_task_runs_a_queued_run(notes):
    from memory.tasks import sleep_task

    run = SleepRun.objects.create(requested_by="owner", only_step="embed")
    assert sleep_task(run.pk) == {"id": run.pk, "status": "done"}


def test_the_scheduled_task_skips_a_night_while_a_run_runs(db):
    from memory.tasks import scheduled_sleep

    running_run()
    assert "already running" in scheduled_sleep()["skipped"]


def test_similar_edges_from_a_run_point_newer_to_older(notes):
    run_sleep(requested_by="test")
    edges = Edge.objects.filter(kind="similar").values_list("from_node_id", "to_node_id")
    assert edges and all(a > b for a, b in edges)


def test_sleep_steps_count_every_batch_and_report_their_fields(make_note, monkeypatch) -> None:
    import memory.sleep.decay as decay_module
    import memory.sleep.promote as promote_module
    from memory.models import Event, Node

    monkeypatch.setattr(decay_module, "BATCH", 1)
    monkeypatch.setattr(promote_module, "BATCH", 1)
    for i in range(2):
        make_note(
            f"Old page {i}.",
            days_old=40,
            kind="internet",
            jurisdiction="wild",
            origins=[],
            source="https://example.org",
        )
    assert decay_module.decay()["count"] == 2
    read = [make_note(f"Read on three days, {i}.") for i in range(2)]
    Node.objects.filter(pk__in=[n.pk for n in read]).update(access_count=3, read_days=3)
    assert promote_module.promote()["count"] == 2
    node = Node.objects.get(pk=read[0].pk)
    assert Event.objects.get(node=node, kind="promoted_permanent").at == node.permanent_at
