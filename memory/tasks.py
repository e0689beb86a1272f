"""django-q2 tasks: thin, they load by id and call the domain function."""

from __future__ import annotations

from typing import Any

from memory.errors import Conflict
from memory.importers import watch
from memory.models import SleepRun
from memory.sleep.run import run_sleep


def sleep_task(run_id: int) -> dict[str, Any]:
    """Run the queued SleepRun `run_id` (enqueued by memory.sleep.request_sleep)."""
    run = run_sleep(run=SleepRun.objects.get(pk=run_id))
    return {"id": run.pk, "status": run.status}


def scheduled_sleep() -> dict[str, Any]:
    """The nightly schedule's entry point; a night when a run is already going is skipped."""
    try:
        run = run_sleep(requested_by="schedule")
    except Conflict as exc:
        return {"skipped": exc.message}
    return {"id": run.pk, "status": run.status}


def watch_scan(value: str | None = None) -> dict[str, Any]:
    """One scan of the watched folders (`value` in GROVE_WATCH's form, default the setting)."""
    scan = watch.scan(watched=watch.folders(value))
    return {"id": scan.pk, "files": scan.files_changed, "turns": scan.turns_new}


def scheduled_watch() -> dict[str, Any]:
    """The watch schedule's entry point (memory.importers.watch.ensure_schedule)."""
    return watch_scan()
