"""Sleep: the nightly protocol, one run at a time, each step batched and recorded (DESIGN.md).

Steps, in order: semantic -> embed -> entities -> crosslink -> consolidate -> promote -> decay ->
integrity.
Each step commits in its own batches (a crash loses at most the batch in flight, and every flag
commits with its event), takes at most `max_nodes` units of work, and is idempotent: re-running it
after a crash redoes nothing twice.

One run at a time: a run claims itself with a conditional UPDATE (queued -> running), and the
partial unique index memory_sleeprun_one_running makes a second claimant fail in the database.
A running run beats (heartbeat_at) after every batch and records its worker's pid and host in
steps["_worker"]; before any claim, a running run whose heartbeat is stale or whose process is
gone is marked failed ("worker died mid-run").

Incremental marks: cross-link and consolidation remember how far they got (node id / edge id
high-water marks in steps[...]) and the next run starts there. Every clock here is the store
clock (timezone.now for started/finished/heartbeat).
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from memory.custody.drift import step as drift_step
from memory.custody.since import sleep_checks
from memory.errors import Conflict, Invalid
from memory.models import Node, SleepRun, SleepStatus
from memory.recall.entities import record_mentions
from memory.sleep.consolidate import consolidate
from memory.sleep.crosslink import crosslink
from memory.sleep.decay import decay
from memory.sleep.promote import promote
from memory.sleep.semantic import refresh_semantic
from memory.vectors.embed import Since, embed_missing, get_embedder, missing_ids

if TYPE_CHECKING:
    from django_q.models import Schedule  # untyped: Any to mypy

STEPS = (
    "semantic",
    "embed",
    "entities",
    "crosslink",
    "consolidate",
    "promote",
    "decay",
    "drift",
    "integrity",
)
STALE_SECONDS = settings.GROVE_SLEEP_STALE_SECONDS
SCHEDULE_NAME = "grove-sleep"
WORKER_KEY = "_worker"


# --- one run at a time ------------------------------------------------------------------------


def _process_gone(worker: dict[str, Any]) -> bool:
    """True when the run's worker process is known dead (same host, pid gone or a zombie)."""
    pid = worker.get("pid")
    if not pid or worker.get("host") != socket.gethostname() or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def reap_stale(*, now: datetime | None = None) -> list[int]:
    """Mark failed every running run whose worker died: heartbeat (or start) older than
    GROVE_SLEEP_STALE_SECONDS by the store clock, or its process gone. Returns their ids."""
    now = now or timezone.now()
    reaped = []
    for run in SleepRun.objects.filter(status=SleepStatus.RUNNING):
        beat = run.heartbeat_at or run.started_at or run.requested_at
        stale = beat < now - timedelta(seconds=STALE_SECONDS)
        if not (stale or _process_gone(run.steps.get(WORKER_KEY, {}))):
            continue
        why = "heartbeat stale" if stale else "process gone"
        updated = SleepRun.objects.filter(pk=run.pk, status=SleepStatus.RUNNING).update(
            status=SleepStatus.FAILED,
            finished_at=now,
            error=f"worker died mid-run ({why}; last heartbeat {beat.isoformat()}, "
            f"step {run.current_step or '-'})",
        )
        if updated:
            reaped.append(run.pk)
    return reaped


def _running_conflict(running: SleepRun) -> Conflict:
    return Conflict(
        f"a sleep run is already running (run {running.pk}, step "
        f"{running.current_step or 'starting'}, since {running.started_at:%Y-%m-%d %H:%M:%S}Z)",
        code="sleep_running",
    )


def _claim(run: SleepRun) -> None:
    now = timezone.now()
    worker = {"pid": os.getpid(), "host": socket.gethostname()}
    try:
        claimed = SleepRun.objects.filter(pk=run.pk, status=SleepStatus.QUEUED).update(
            status=SleepStatus.RUNNING,
            started_at=now,
            heartbeat_at=now,
            steps={WORKER_KEY: worker},
            error="",
        )
    except IntegrityError:
        # The partial unique index: another run holds "running".
        running = SleepRun.objects.filter(status=SleepStatus.RUNNING).first()
        conflict = (
            _running_conflict(running)
            if running
            else Conflict("another sleep run claimed first", code="sleep_running")
        )
        SleepRun.objects.filter(pk=run.pk, status=SleepStatus.QUEUED).update(
            status=SleepStatus.FAILED, finished_at=now, error=conflict.message
        )
        raise conflict from None
    if not claimed:
        run.refresh_from_db()
        raise Conflict(f"sleep run {run.pk} is {run.status}, not queued", code="sleep_not_queued")
    run.refresh_from_db()


# --- the run ----------------------------------------------------------------------------------


def last_mark(step: str, key: str, *, model: str | None = None) -> int:
    """The furthest high-water mark `key` a non-dry run recorded for `step` (for `model`, when
    given). Failed runs count too: their batches committed, and redoing one is harmless."""
    best = 0
    for steps in SleepRun.objects.filter(dry_run=False).values_list("steps", flat=True):
        info = (steps or {}).get(step) or {}
        if model is not None and info.get("model") != model:
            continue
        best = max(best, int(info.get(key) or 0))
    return best


def _last_complete_embed(model: str) -> Since | None:
    """Where the latest non-dry run that left no node of `model` unembedded got to."""
    runs = SleepRun.objects.filter(dry_run=False, started_at__isnull=False).order_by("-id")
    for started, steps in runs.values_list("started_at", "steps").iterator():
        info = (steps or {}).get("embed") or {}
        done = info.get("model") == model and info.get("complete") and info.get("through_id")
        if done and started is not None:
            return Since(int(info["through_id"]), started)
    return None


def _embed(limit: int | None, dry_run: bool, beat: Callable[..., None]) -> dict[str, Any]:
    name = get_embedder().name
    through = Node.objects.aggregate(top=Max("id"))["top"] or 0
    # Only what arrived or came back since a complete run: no anti-join over the whole graph
    # each night (the weekly integrity run still checks every live node has its vector).
    since = _last_complete_embed(name)

    def missing() -> int:
        return int(sum(1 for i in missing_ids(name, since=since) if i <= through))

    if dry_run:
        return {"count": missing(), "model": name}

    def progress(made: int, listed: int) -> None:
        # A new model re-embeds every node (e5: minutes per 10k): the run page's step count
        # grows with each batch, and `of` says how many were found missing.
        beat(model=name, count=made, of=listed)

    made = embed_missing(limit=limit, batch=4096, since=since, progress=progress)
    # "complete" tells integrity that every node up to through_id had its vector after a run.
    return {"count": made, "model": name, "through_id": through, "complete": missing() == 0}


def _entities(limit: int | None, dry_run: bool, beat: Callable[..., None]) -> dict[str, Any]:
    after = last_mark("entities", "through_id")
    if dry_run:
        return {"count": Node.objects.filter(pk__gt=after).count(), "through_id": after}
    return record_mentions(after_id=after, limit=limit)


def _crosslink(limit: int | None, dry_run: bool, beat: Callable[..., None]) -> dict[str, Any]:
    after = last_mark("crosslink", "through_id", model=get_embedder().name)
    return crosslink(after_id=after, limit=limit, dry_run=dry_run, beat=beat)


def _consolidate(limit: int | None, dry_run: bool, beat: Callable[..., None]) -> dict[str, Any]:
    after = last_mark("consolidate", "through_edge_id")
    return consolidate(after_edge_id=after, limit=limit, dry_run=dry_run, beat=beat)


def _promote(limit: int | None, dry_run: bool, beat: Callable[..., None]) -> dict[str, Any]:
    return promote(limit=limit, dry_run=dry_run, beat=beat)


def _decay(limit: int | None, dry_run: bool, beat: Callable[..., None]) -> dict[str, Any]:
    return decay(limit=limit, dry_run=dry_run, beat=beat)


def _integrity(limit: int | None, dry_run: bool, beat: Callable[..., None]) -> dict[str, Any]:
    # What changed since the last clean run, or everything once a week (integrity_since.py).
    results, info = sleep_checks()
    failed = {r.name: r.violations for r in results if not r.ok}
    return {"count": sum(len(v) for v in failed.values()), "failed": failed, **info}


_STEP_FUNCS: dict[str, Callable[[int | None, bool, Callable[..., None]], dict[str, Any]]] = {
    "semantic": refresh_semantic,
    "embed": _embed,
    "entities": _entities,
    "crosslink": _crosslink,
    "consolidate": _consolidate,
    "promote": _promote,
    "decay": _decay,
    "drift": drift_step,
    "integrity": _integrity,
}


def _save(run: SleepRun, **fields: Any) -> None:
    """Write the run's progress; if someone marked it failed meanwhile, stop working."""
    fields.setdefault("heartbeat_at", timezone.now())
    fields["steps"] = run.steps
    if not SleepRun.objects.filter(pk=run.pk, status=SleepStatus.RUNNING).update(**fields):
        raise RuntimeError(f"sleep run {run.pk} is no longer running; stopping")


def _new_run(
    *, requested_by: str, dry_run: bool, max_nodes: int | None, only_step: str | None
) -> SleepRun:
    """A queued SleepRun, unless the step is unknown (Invalid) or a run is running (Conflict,
    after first marking failed any run whose worker died)."""
    if only_step and only_step not in STEPS:
        raise Invalid(
            f"unknown sleep step {only_step!r}; expected one of: {', '.join(STEPS)}",
            code="unknown_step",
        )
    reap_stale()
    if running := SleepRun.objects.filter(status=SleepStatus.RUNNING).first():
        raise _running_conflict(running)
    return SleepRun.objects.create(
        requested_by=requested_by,
        dry_run=dry_run,
        max_nodes=max_nodes,
        only_step=only_step or "",
    )


def run_sleep(
    *,
    run: SleepRun | None = None,
    dry_run: bool = False,
    max_nodes: int | None = None,
    only_step: str | None = None,
    requested_by: str = "schedule",
) -> SleepRun:
    """Run the sleep protocol now, in this process, and return the finished SleepRun.

    With `run` (a queued row, as the worker's task passes it) its own dry_run / max_nodes /
    only_step apply; otherwise a row is created from the arguments. Refuses (Invalid) an unknown
    step; refuses (Conflict "sleep_running") while another run is running, after first marking
    failed any run whose worker died. A dry run reports what each step would do and changes
    nothing in the graph. On an error the run is marked failed and the error re-raised.
    """
    if run is None:
        run = _new_run(
            requested_by=requested_by, dry_run=dry_run, max_nodes=max_nodes, only_step=only_step
        )
    else:
        reap_stale()
    _claim(run)
    steps = [run.only_step] if run.only_step else list(STEPS)
    try:
        for step in steps:
            run.current_step = step

            def beat(_step: str = step, **progress: Any) -> None:
                run.steps[_step] = {**run.steps.get(_step, {}), **progress, "partial": True}
                _save(run)

            _save(run, current_step=step)
            started, cpu = time.perf_counter(), time.process_time()
            result = _STEP_FUNCS[step](run.max_nodes, run.dry_run, beat)
            result["ms"] = round((time.perf_counter() - started) * 1000, 1)
            # This process's CPU time too: on a busy machine wall time mostly measures the others.
            result["cpu_ms"] = round((time.process_time() - cpu) * 1000, 1)
            run.steps[step] = result
            _save(run)
    except Exception as exc:
        run.status = SleepStatus.FAILED
        run.error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        SleepRun.objects.filter(pk=run.pk, status=SleepStatus.RUNNING).update(
            status=SleepStatus.FAILED,
            finished_at=timezone.now(),
            steps=run.steps,
            error=run.error,
        )
        raise
    _save(run, status=SleepStatus.DONE, finished_at=timezone.now(), current_step="")
    run.refresh_from_db()
    return run


# --- the worker and the schedule ---------------------------------------------------------------


def request_sleep(
    *,
    requested_by: str,
    dry_run: bool = False,
    max_nodes: int | None = None,
    only_step: str | None = None,
) -> SleepRun:
    """Queue a sleep run for the worker (the dashboard's "sleep now"): a queued SleepRun, and its
    task enqueued after commit. A run already queued and not yet started is returned instead of
    a second one (a double click queues one run). Refuses (Conflict "sleep_running") while a run
    is running, after marking failed any run whose worker died; refuses (Invalid) an unknown
    step."""
    from django_q.tasks import async_task

    # BEGIN IMMEDIATE (settings): two requests at once serialise here, so the second one sees
    # the first one's queued row.
    with transaction.atomic():
        waiting = SleepRun.objects.filter(status=SleepStatus.QUEUED)
        queued = waiting.filter(
            dry_run=dry_run, max_nodes=max_nodes, only_step=only_step or ""
        ).first()
        if queued is not None:
            return queued
        run = _new_run(
            requested_by=requested_by, dry_run=dry_run, max_nodes=max_nodes, only_step=only_step
        )
        # After commit: the worker must find the row it is told to run.
        transaction.on_commit(
            lambda: async_task("memory.tasks.sleep_task", run.pk, task_name=f"sleep-{run.pk}")
        )
    return run


def ensure_schedule(*, cron: str | None = None) -> Schedule:
    """Create or update the one django-q2 schedule that runs sleep (GROVE_SLEEP_CRON, nightly at
    03:30 UTC by default). Idempotent: calling it again changes nothing unless the cron changed.

    Refuses (Invalid) a cron expression croniter cannot read.
    """
    from croniter import CroniterBadCronError, croniter
    from django_q.models import Schedule

    cron = (cron or settings.GROVE_SLEEP_CRON).strip()
    try:
        next_run = croniter(cron, timezone.now()).get_next(datetime)
    except (CroniterBadCronError, ValueError) as exc:
        raise Invalid(
            f"sleep cron {cron!r} is not a cron expression: {exc}", code="bad_cron"
        ) from exc
    kind = Schedule.CRON
    existing = Schedule.objects.filter(name=SCHEDULE_NAME).first()
    if existing and existing.cron == cron and existing.schedule_type == kind:
        return existing
    schedule, _ = Schedule.objects.update_or_create(
        name=SCHEDULE_NAME,
        defaults={
            "func": "memory.tasks.scheduled_sleep",
            "schedule_type": kind,
            "cron": cron,
            "repeats": -1,
            "next_run": next_run,
        },
    )
    return schedule
