"""Browse and Forgotten: every node by facets, and the decayed ones with why and a restore."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from dashboard.browse import FACETS, LIFECYCLES, SORT_LABELS, Page, browse, forgotten
from memory.audit import reason_words
from memory.errors import Invalid
from memory.models import DecayReason, Jurisdiction, Kind, Node, Trust
from memory.recall.dig import FILTERS
from web.htmx import HtmxHttpRequest


def _domains() -> list[str]:
    return list(Node.objects.values_list("domain", flat=True).distinct().order_by("domain"))


def _chips(request: HtmxHttpRequest, filters: dict[str, str]) -> list[tuple[str, str, str]]:
    """(facet, value, the link that removes it) for each facet in use."""
    chips = []
    for name, value in filters.items():
        if value:
            rest = request.GET.copy()
            rest.pop(name, None)
            rest.pop("page", None)
            chips.append((name, value, "?" + rest.urlencode()))
    return chips


@require_GET
def browse_nodes(request: HtmxHttpRequest) -> HttpResponse:
    """Browsing is inspection, not use: listing a node counts no read."""
    error = ""
    try:
        page = browse(request.GET)
    except Invalid as refused:
        error = refused.message
        page = Page(rows=[], number=1, has_next=False)
    context = {
        "page": page,
        "error": error,
        "facets": FACETS,
        "trusts": Trust.values,
        "lifecycles": LIFECYCLES,
        "kinds": Kind.values,
        "jurisdictions": Jurisdiction.values,
        "domains": _domains(),
        "sorts": SORT_LABELS,
        "node_base": reverse("node", args=[0]).removesuffix("0/"),
        "active": _chips(request, page.filters),
    }
    status = 400 if error else 200
    if request.htmx and request.htmx.target == "node-rows":
        return render(request, "dashboard/nodes.html#rows", context, status=status)
    return render(request, "dashboard/nodes.html", context, status=status)


@require_GET
def forgotten_nodes(request: HtmxHttpRequest) -> HttpResponse:
    """Decayed nodes, newest decay first: when, why in words, and a restore button; looked up
    by words and narrowed by reason, domain, kind, author, origin and when let go."""
    status, error = 200, ""
    try:
        page = forgotten(request.GET)
    except Invalid as refused:
        status, error, page = 400, refused.message, Page(rows=[], number=1, has_next=False)
        page.filters = {name: request.GET.get(name, "") for name in FILTERS}
    context = {
        "page": page,
        "error": error,
        "domains": _domains(),
        "kinds": Kind.values,
        "reasons": [(code, reason_words(code)) for code in DecayReason.values],
        "chips": _chips(request, page.filters),
        "node_base": reverse("node", args=[0]).removesuffix("0/"),
        "here": request.get_full_path(),
    }
    return render(request, "dashboard/forgotten.html", context, status=status)
