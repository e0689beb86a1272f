"""The overview page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from dashboard.auditlog import sealed_ids
from dashboard.charts import daily_bars
from dashboard.overview import (
    PENDING_CAP,
    chart_days_label,
    daily_activity,
    last_runs,
    latest_events,
    lifecycle_counts,
    next_sleep,
    pending_decay_count,
)
from memory.custody.drift import last_found
from memory.trust import trust_counts
from review.queue import held_back_words


@require_GET
def overview(request: HttpRequest) -> HttpResponse:
    counts = lifecycle_counts()
    trusts = trust_counts(total=counts["total"])
    activity = daily_activity()
    label = chart_days_label(activity["days"])
    chart = daily_bars(
        days=activity["days"],
        series=[
            ("arrived", "#2f6b4f", activity["arrived"]),
            ("decayed", "#a0522d", activity["decayed"]),
        ],
        title=f"Nodes arrived and decayed per day, {label} (UTC)",
    )
    events = latest_events()
    context = {
        "counts": counts,
        "trusts": trusts,
        "chart": chart,
        "schedule": next_sleep(),
        "runs": last_runs(),
        "events": events,
        "sealed_ids": sealed_ids(e.node_id for e in events),
        "held": held_back_words(),
        "drift_count": len(last_found()),
    }
    return render(request, "dashboard/overview.html", context)


@require_GET
def overview_waiting(request: HttpRequest) -> HttpResponse:
    """How many nodes the decay sweep collects now, as the overview's queue link (its own
    request: the mark walks every live holding edge)."""
    context = {"pending_decays": pending_decay_count(), "pending_cap": PENDING_CAP}
    return render(request, "dashboard/overview.html#waiting", context)
