"""The audit log: every event, filtered and paginated; exports; restore from a decay row."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from dashboard.auditlog import FILTERS, csv_lines, filter_events, json_chunks, sealed_ids
from dashboard.view_helpers import OWNER_ACTOR, HtmxHttpRequest
from memory.chain import last_checkpoint
from memory.errors import GroveError, Invalid
from memory.models import DecayReason, Event, EventKind, Node
from memory.sleep.decay import restore

PER_PAGE = 50


def _row_context(events: list[Event], *, here: str) -> dict:
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
        error = refused.message
        events = Event.objects.none()
    page = Paginator(events.select_related("node", "token"), PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {
        "page": page,
        "error": error,
        "checkpoint": last_checkpoint(),
        "filters": {name: request.GET.get(name, "") for name in FILTERS},
        "kinds": EventKind.values,
        "reasons": sorted({*DecayReason.values, "owner_restore", "owner_keep"}),
        "domains": Node.objects.values_list("domain", flat=True).distinct().order_by("domain"),
        **_row_context(list(page.object_list), here=request.get_full_path()),
    }
    if request.htmx and request.htmx.target == "audit-rows":
        return render(request, "dashboard/audit.html#rows", context)
    return render(request, "dashboard/audit.html", context)


def _filtered(request: HtmxHttpRequest):
    try:
        return filter_events(request.GET), ""
    except Invalid as refused:
        return None, refused.message


@require_GET
def audit_export_csv(request: HtmxHttpRequest) -> HttpResponse | StreamingHttpResponse:
    events, error = _filtered(request)
    if events is None:
        return HttpResponse(error, status=400, content_type="text/plain; charset=utf-8")
    response = StreamingHttpResponse(csv_lines(events), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="grove-audit.csv"'
    return response


@require_GET
def audit_export_json(request: HtmxHttpRequest) -> HttpResponse | StreamingHttpResponse:
    events, error = _filtered(request)
    if events is None:
        return HttpResponse(error, status=400, content_type="text/plain; charset=utf-8")
    response = StreamingHttpResponse(json_chunks(events), content_type="application/json")
    response["Content-Disposition"] = 'attachment; filename="grove-audit.json"'
    return response


@require_POST
def restore_node(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """Restore a decayed node (memory.sleep.decay.restore, a restored event). With htmx, the
    decay row the button sat in comes back re-rendered; otherwise a redirect back to the log."""
    error = ""
    try:
        restore(node_id, actor=OWNER_ACTOR)
    except GroveError as refused:
        error = refused.message
    if request.htmx:
        event_id = request.POST.get("event", "")
        events = (
            Event.objects.filter(pk=int(event_id)) if event_id.isdigit() else Event.objects.none()
        )
        event = events.select_related("node").first()
        if event is not None:
            back = request.POST.get("next", "")
            context = {"e": event, "row_error": error, **_row_context([event], here=back)}
            return render(request, "dashboard/audit.html#row", context)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"Node #{node_id} restored.")
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = ""
    return redirect(back or "audit_log")
