"""Search: a query box over recall; results are previews, opening one is a read."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from dashboard.asof import widget_value
from dashboard.view_helpers import OWNER_ACTOR, HtmxHttpRequest, as_of_param
from memory.errors import Invalid
from memory.models import Node
from memory.recall import recall
from memory.visibility import SCOPES

RESULTS = 20


@require_GET
def search(request: HtmxHttpRequest) -> HttpResponse:
    query = request.GET.get("q", "").strip()
    scope = request.GET.get("scope", "home")
    domain = request.GET.get("domain", "").strip()
    superseded = request.GET.get("superseded") == "1"
    as_of, error = as_of_param(request)
    results: list[dict] = []
    if query and not error:
        try:
            results = recall(
                query,
                scope=scope,
                domains=[domain] if domain else None,
                limit=RESULTS,
                as_of=as_of,
                include_superseded=superseded,
                actor=OWNER_ACTOR,
                why=True,
            )
        except Invalid as refused:
            error = refused.message
    context = {
        "query": query,
        "scope": scope,
        "scopes": SCOPES,
        "domain": domain,
        "domains": Node.objects.values_list("domain", flat=True).distinct().order_by("domain"),
        "superseded": superseded,
        "as_of": as_of,
        "as_of_value": widget_value(as_of) if as_of else request.GET.get("as_of", ""),
        "error": error,
        "results": results,
        "searched": bool(query),
    }
    if request.htmx:
        return render(request, "dashboard/search.html#results", context)
    return render(request, "dashboard/search.html", context)
