from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from dashboard.overview import latest_events, lifecycle_counts


@require_GET
def overview(request: HttpRequest) -> HttpResponse:
    context = {"counts": lifecycle_counts(), "events": latest_events()}
    return render(request, "dashboard/overview.html", context)
