"""Sleep runs: per-step counts and timings; "run sleep now" enqueues on the real worker."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from dashboard.view_helpers import OWNER_ACTOR, HtmxHttpRequest
from memory.errors import GroveError
from memory.models import SleepRun, SleepStatus
from memory.scroll import scroll_dir, verify_scroll
from memory.sleep import STEPS, request_sleep
from memory.sleep.promote import promotion_threshold

RUNS_SHOWN = 25
ACTIVE = (SleepStatus.QUEUED, SleepStatus.RUNNING)


def _status_context() -> dict:
    runs = list(SleepRun.objects.order_by("-id")[:RUNS_SHOWN])
    for run in runs:
        # Steps in the order sleep runs them; private bookkeeping keys (e.g. "_worker") stay out.
        run.step_rows = [(name, run.steps[name]) for name in STEPS if name in run.steps]
    return {
        "runs": runs,
        "steps": STEPS,
        "active": any(run.status in ACTIVE for run in runs),
    }


def _scrolls(*, verify: bool) -> list[dict]:
    """The conversation scrolls on disk, each verified (every record re-hashed, sequence and
    pair pointers checked) only when the owner asks: a scroll can be large."""
    rows = []
    for path in sorted(scroll_dir().glob("*.jsonl")):
        row: dict = {"name": path.stem, "size": path.stat().st_size}
        if verify:
            try:
                row["report"] = verify_scroll(path.stem)
            except GroveError as refused:
                row["report"] = {"ok": False, "records": 0, "problems": [refused.message]}
        rows.append(row)
    return rows


@require_GET
def sleep_runs(request: HtmxHttpRequest) -> HttpResponse:
    verify = request.GET.get("verify") == "scrolls"
    context = {
        **_status_context(),
        "scrolls": _scrolls(verify=verify),
        "verified": verify,
        "threshold": promotion_threshold(),
        "decay_days": settings.GROVE_DECAY_MIN_AGE_DAYS,
        "cascade_days": settings.GROVE_CASCADE_MIN_AGE_DAYS,
        "cron": settings.GROVE_SLEEP_CRON,
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
    error = ""
    try:
        run = request_sleep(requested_by=OWNER_ACTOR)
    except GroveError as refused:
        error = refused.message
    if request.htmx:
        return render(request, "dashboard/sleep.html#status", {**_status_context(), "error": error})
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"Sleep run #{run.pk} queued for the worker.")
    return redirect("sleep_runs")
