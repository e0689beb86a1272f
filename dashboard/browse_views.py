"""Browse and Forgotten: every node by facets, and the decayed ones with why and a restore."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.db import connection
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from dashboard.browse import FACETS, LIFECYCLES, SORT_LABELS, Page, browse, forgotten
from memory import batches
from memory.audit import reason_words
from memory.custody.ground_markdown import zip_bytes
from memory.errors import Invalid
from memory.models import DecayReason, Jurisdiction, Kind, Node, Trust
from memory.recall.dig import FILTERS, ForgottenFilter, forgotten_ids
from memory.trust import WORDLESS, trust_map
from review.view_helpers import owner_name
from web.htmx import HtmxHttpRequest

SAMPLE = 20  # rows a confirmation shows of what it will act on


def _domains() -> list[str]:
    """Every domain, in order: one index seek a domain (a loose index scan), where DISTINCT
    read the whole domain index, 100,000 entries at 100k, for a handful of names."""
    with connection.cursor() as cursor:
        cursor.execute(
            """WITH RECURSIVE d(domain) AS (SELECT MIN(domain) FROM memory_node UNION ALL
                SELECT (SELECT MIN(n.domain) FROM memory_node n WHERE n.domain > d.domain)
                FROM d WHERE d.domain IS NOT NULL)
               SELECT domain FROM d WHERE domain IS NOT NULL"""
        )
        return [row[0] for row in cursor.fetchall()]


def _chips(
    request: HtmxHttpRequest, filters: dict[str, str], names: dict[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """(facet, value, the link that removes it) for each facet in use; `names` says a facet's
    parameter in the page's words."""
    chips = []
    for name, value in filters.items():
        if value:
            rest = request.GET.copy()
            rest.pop(name, None)
            rest.pop("page", None)
            chips.append(((names or {}).get(name, name), value, "?" + rest.urlencode()))
    return chips


# Forgotten's filters as its form labels them ("q: heron" meant nothing to the owner).
FORGOTTEN_CHIPS = {
    "q": "words",
    "reason": "why",
    "origin": "from",
    "since": "let go from",
    "until": "let go until",
}


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
        "chips": _chips(request, page.filters, FORGOTTEN_CHIPS),
        "node_base": reverse("node", args=[0]).removesuffix("0/"),
        "here": request.get_full_path(),
        "filter_query": urlencode({k: v for k, v in page.filters.items() if v}),
        "undo_batch": batch
        if batches.BATCH_ID.fullmatch(batch := request.GET.get("batch", ""))
        else "",
    }
    return render(request, "dashboard/forgotten.html", context, status=status)


@require_http_methods(["GET", "POST"])
def restore_matching(request: HtmxHttpRequest) -> HttpResponse:
    """Restore every forgotten node the filter matches (memory.recall.dig.forgotten_ids), as one
    batch (memory.batches.restore_many: never a sealed or rejected node). GET, or a POST
    without `confirmed`, shows what it will do: the count, the filter in words, a sample. The
    confirmed POST acts on what matches then and lands on /forgotten/ with an Undo. A bad day
    in the filter is refused (400) with nothing restored."""
    query = request.POST if request.method == "POST" else request.GET
    try:
        chosen = ForgottenFilter.of(query)
    except Invalid as refused:
        return HttpResponse(refused.message, status=400, content_type="text/plain")
    filters = {k: v for k, v in chosen.values().items() if v}
    back = reverse("forgotten") + (f"?{urlencode(filters)}" if filters else "")
    ids = forgotten_ids(chosen)
    words = chosen.described()
    if request.method == "POST" and request.POST.get("confirmed") == "yes":
        out = batches.restore_many(ids, actor=owner_name(request), words=words)
        done = len(out.done)
        messages.success(request, f"Restored {done} node{'s' * (done != 1)}: live again.")
        if out.skipped:
            messages.info(request, f"{len(out.skipped)} left as they were (sealed or rejected).")
        if done:
            return redirect(f"{reverse('forgotten')}?{urlencode({**filters, 'batch': out.batch})}")
        return redirect(back)
    trusts = trust_map(ids)
    hidden = [i for i in ids if trusts[i] in WORDLESS]
    ids = [i for i in ids if trusts[i] not in WORDLESS]
    nodes = Node.objects.in_bulk(ids[:SAMPLE])
    sample = [nodes[i] for i in ids[:SAMPLE] if i in nodes]
    context = {
        "count": len(ids),
        "hidden": len(hidden),
        "words": words,
        "filters": filters,
        "sample": sample,
        "more": max(0, len(ids) - SAMPLE),
        "back": back,
    }
    return render(request, "dashboard/forgotten_restore.html", context)


@require_GET
def ground_markdown(request: HtmxHttpRequest) -> HttpResponse:
    """What is true as a zip of markdown files (memory/custody/ground_markdown.py): a read of
    ground, never a read of a node (nothing it holds moves)."""
    response = HttpResponse(zip_bytes(), content_type="application/zip")
    response["Content-Disposition"] = 'attachment; filename="grove-ground.zip"'
    return response
