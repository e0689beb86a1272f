"""Sleep runs: per-step counts and timings; "run sleep now" enqueues on the real worker."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from dashboard.view_helpers import OWNER_ACTOR
from memory.errors import GroveError
from memory.importers import watch
from memory.models import SessionFile, SleepRun, SleepStatus, WatchScan
from memory.scroll import scroll_dir, verify_scroll_file
from memory.sleep.promote import promotion_threshold
from memory.sleep.run import STEPS, request_sleep
from review.queue import held_back_words
from web.htmx import HtmxHttpRequest, act_response

RUNS_SHOWN = 25
ACTIVE = (SleepStatus.QUEUED, SleepStatus.RUNNING)


def _status_context() -> dict[str, Any]:
    runs = list(SleepRun.objects.order_by("-id")[:RUNS_SHOWN])
    for run in runs:
        # Steps in the order sleep runs them; private bookkeeping keys (e.g. "_worker") stay out.
        # A display-only attribute the template reads; not a field of SleepRun.
        run.step_rows = [(n, run.steps[n]) for n in STEPS if n in run.steps]  # type: ignore[attr-defined]
    return {
        "runs": runs,
        "steps": STEPS,
        "active": any(run.status in ACTIVE for run in runs),
    }


def _scrolls(*, verify: bool) -> list[dict[str, Any]]:
    """The conversation scrolls on disk, each verified (every record re-hashed, sequence and
    pair pointers checked) only when the owner asks: a scroll can be large."""
    base = scroll_dir()
    rows = []
    # One level down too: other domains' scrolls live in <domain>/<conversation>.jsonl.
    for path in sorted([*base.glob("*.jsonl"), *base.glob("*/*.jsonl")]):
        name = path.relative_to(base).as_posix()
        row: dict[str, Any] = {"name": name.removesuffix(".jsonl"), "size": path.stat().st_size}
        if verify:
            row["report"] = verify_scroll_file(name)
        rows.append(row)
    return rows


SCANS_SHOWN = 5


def _watched() -> dict[str, Any]:
    """The watched folders (GROVE_WATCH) with how many session files each has brought in, and
    the last scans. Reads cursors and scan rows only: no body."""
    try:
        folders, problem = watch.folders(), ""
    except GroveError as exc:
        folders, problem = [], exc.message
    rows = [
        {
            "folder": folder,
            "exists": folder.path.is_dir(),
            "files": SessionFile.objects.filter(
                path__startswith=str(folder.path.resolve()).rstrip("/") + "/"
            ).count(),
        }
        for folder in folders
    ]
    scans = list(WatchScan.objects.order_by("-id")[:SCANS_SHOWN])
    return {
        "watched": rows,
        "watch_problem": problem,
        "watch_scans": scans,
        "watch_seconds": settings.GROVE_WATCH_SECONDS,
    }


@require_GET
def sleep_runs(request: HtmxHttpRequest) -> HttpResponse:
    verify = request.GET.get("verify") == "scrolls"
    context = {
        **_status_context(),
        "scrolls": _scrolls(verify=verify),
        "verified": verify,
        "threshold": promotion_threshold(),
        "decay_days": settings.GROVE_DECAY_MIN_AGE_DAYS,
        "cron": settings.GROVE_SLEEP_CRON,
        "held": held_back_words(),
        **_watched(),
    }
    return render(request, "dashboard/sleep.html", context)


@require_GET
def sleep_status(request: HtmxHttpRequest) -> HttpResponse:
    """The runs table alone: the page polls it every second while a run is queued or running;
    once none is, the fragment comes back without its trigger and the polling stops (and the
    "Run sleep now" button inside it comes back enabled)."""
    return render(request, "dashboard/sleep.html#status", _status_context())


@require_POST
def run_sleep_now(request: HtmxHttpRequest) -> HttpResponse:
    return act_response(
        request,
        lambda: request_sleep(requested_by=OWNER_ACTOR),
        refusal=GroveError,
        done=lambda run: f"Sleep run #{run.pk} queued for the worker.",
        fallback=reverse("sleep_runs"),
        row=lambda error: render(
            request, "dashboard/sleep.html#status", {**_status_context(), "error": error or ""}
        ),
    )
