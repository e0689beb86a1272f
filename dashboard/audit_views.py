"""The audit log: every event, filtered and paginated; exports; restore from a decay row."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from dashboard.auditlog import (
    FILTERS,
    actor_choices,
    csv_lines,
    day_presets,
    filter_events,
    json_chunks,
    sealed_ids,
)
from dashboard.view_helpers import OWNER_ACTOR
from memory.audit import REASON_WORDS
from memory.custody.chain_verify import last_checkpoint
from memory.errors import GroveError, Invalid
from memory.forgetting import restore
from memory.models import DecayReason, Event, EventKind, Node
from memory.visibility import MAX_ID
from web.htmx import HtmxHttpRequest, act_response

PER_PAGE = 50


def _row_context(events: list[Event], *, here: str) -> dict[str, Any]:
    """Which rows hide their excerpt (sealed now) and which decays can be restored (the node is
    still decayed now); URL prefixes reversed once, not once per row (50 rows, several links
    each, were a measurable share of the page's time)."""
    ids = {e.node_id for e in events if e.node_id}
    decayed = set(
        Node.objects.filter(pk__in=ids, decayed_at__isnull=False).values_list("pk", flat=True)
    )
    node_base = reverse("node", args=[0]).removesuffix("0/")
    return {
        "sealed_ids": sealed_ids(ids),
        "decayed_ids": decayed,
        "node_base": node_base,
        "here": here,
    }


@require_GET
def audit_log(request: HtmxHttpRequest) -> HttpResponse:
    error = ""
    try:
        events = filter_events(request.GET)
    except Invalid as refused:
        error, events = refused.message, Event.objects.none()
    page = Paginator(events.select_related("node", "token"), PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {
        "page": page,
        "error": error,
        "checkpoint": last_checkpoint(),
        "filters": {name: request.GET.get(name, "") for name in FILTERS},
        "kinds": sorted(EventKind.values),
        "reasons": sorted({*DecayReason.values, *REASON_WORDS}),
        "domains": Node.objects.values_list("domain", flat=True).distinct().order_by("domain"),
        "actors": actor_choices(),
        "presets": day_presets(timezone.now().date()),
        **_row_context(list(page.object_list), here=request.get_full_path()),
    }
    if request.htmx and request.htmx.target == "audit-rows":
        return render(request, "dashboard/audit.html#rows", context)
    # A refused filter is a 400 page that names the problem (htmx swaps only 2xx, so fragments
    # above keep their 200 and show the same message).
    return render(request, "dashboard/audit.html", context, status=400 if error else 200)


# The exports: the same filtered events, streamed (a long log is never held in memory whole).
EXPORTS: dict[str, tuple[Callable[[QuerySet[Event]], Iterator[str]], str]] = {
    "csv": (csv_lines, "text/csv; charset=utf-8"),
    "json": (json_chunks, "application/json"),
}


@require_GET
def audit_export(request: HtmxHttpRequest, fmt: str) -> HttpResponse | StreamingHttpResponse:
    """The events the log's filters select, as one of EXPORTS (the URL names it); a refused
    filter is a plain-text 400 that names the problem."""
    try:
        events = filter_events(request.GET)
    except Invalid as refused:
        return HttpResponse(refused.message, status=400, content_type="text/plain; charset=utf-8")
    chunks, content_type = EXPORTS[fmt]
    response = StreamingHttpResponse(chunks(events), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="grove-audit.{fmt}"'
    return response


@require_POST
def restore_node(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """Restore a decayed node (memory.forgetting.restore, a restored event). With htmx, the
    decay row the button sat in comes back re-rendered; otherwise a redirect back to the log.
    Refuses (400, before acting) an event that is not a number: nothing commits on bad input."""
    event_id = request.POST.get("event", "")
    if event_id and not (event_id.isascii() and event_id.isdigit() and int(event_id) <= MAX_ID):
        return HttpResponse(
            f"event {event_id!r} is not an event id", status=400, content_type="text/plain"
        )

    def row(error: str | None) -> HttpResponse | None:
        events = Event.objects.filter(pk=int(event_id)) if event_id else Event.objects.none()
        event = events.select_related("node").first()
        if event is None:
            return None
        back = request.POST.get("next", "")
        context = {"e": event, "row_error": error or "", **_row_context([event], here=back)}
        return render(request, "dashboard/audit.html#row", context)

    return act_response(
        request,
        lambda: restore(node_id, actor=OWNER_ACTOR),
        refusal=GroveError,
        done=lambda _: f"Node #{node_id} restored.",
        fallback=reverse("audit_log"),
        row=row,
    )
