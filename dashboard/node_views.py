"""The node page: body, four axes, both clocks, counters, events, authority, neighbourhood."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_POST

from dashboard.asof import widget_value
from dashboard.graph import Neighbourhood, backlinks, hood_list, links, neighbourhood
from dashboard.graph_layout import LEGEND, render_svg
from dashboard.view_helpers import OWNER_ACTOR, as_of_param
from memory.authority import authority_report
from memory.custody.drift import last_found
from memory.errors import GroveError
from memory.extract import extract
from memory.forgetting import held_by
from memory.models import Event, EventKind, Node, Trust
from memory.questions import open_questions_near
from memory.recall.entities import mentions_of
from memory.trust import trust_map
from memory.visibility import live_at, shown_trust
from review.ceremony import can_root, can_supersede
from review.queue import replacement
from review.versions import history
from web.htmx import HtmxHttpRequest


def _get_node_or_404(node_id: int) -> Node:
    node = Node.objects.filter(pk=node_id).first()
    if node is None:
        raise Http404(f"node {node_id} does not exist")
    return node


def _node_href(params: dict[str, str]) -> Callable[[int], str]:
    suffix = f"?{urlencode(params)}" if params else ""
    return lambda node_id: reverse("node", args=[node_id]) + suffix


def _toggled(params: dict[str, str]) -> dict[str, str]:
    flipped = {k: v for k, v in params.items() if k != "decayed"}
    if "decayed" not in params:
        flipped["decayed"] = "1"
    return flipped


def _history(node: Node, as_of: datetime | None) -> tuple[list[Event], int]:
    """The events of (or naming) the node up to as_of, the first 500, and how many came later."""
    events = (
        Event.objects.filter(Q(node=node) | Q(related_node=node))
        .select_related("token")
        .order_by("at", "id")
    )
    later = 0
    if as_of is not None:
        later = events.filter(at__gt=as_of).count()
        events = events.filter(at__lte=as_of)
    return list(events[:500]), later


def _graph_svg(
    hood: Neighbourhood, node_id: int, *, as_of: datetime | None, params: dict[str, str]
) -> SafeString:
    title = f"Graph neighbourhood of node #{node_id}" + (
        f" as of {as_of:%Y-%m-%d %H:%M} UTC" if as_of else ""
    )
    return render_svg(hood, href=_node_href(params), title=title)


@require_GET
def node_page(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """The owner inspecting a node: shown from the row itself and never counted as a read
    (inspection is not use: only agents' reads and the owner's Keep hold a node). A decayed or
    rejected node is marked; an as-of view shows trust and lifecycle as they stood then; a
    sealed node shows only "sealed". A live node says what holds it (memory.forgetting)."""
    node = _get_node_or_404(node_id)
    as_of, as_of_error = as_of_param(request)
    show_decayed = request.GET.get("decayed") == "1"
    params = {
        k: v
        for k, v in (("decayed", "1" if show_decayed else ""), ("as_of", widget_value(as_of)))
        if v
    }
    trust_now = trust_map([node.pk])[node.pk]
    context: dict[str, Any] = {
        "node": node,
        "as_of": as_of,
        "as_of_value": widget_value(as_of) if as_of else request.GET.get("as_of", ""),
        "as_of_error": as_of_error,
        "show_decayed": show_decayed,
        "params": params,
    }
    if trust_now == Trust.SEALED:
        return render(request, "dashboard/node.html", {**context, "sealed": True})
    if as_of_error:  # a 400 naming the problem; never silently "now" (that would count a read)
        return render(request, "dashboard/node.html", context, status=400)
    if as_of is not None and node.created_at > as_of:
        return render(request, "dashboard/node.html", {**context, "absent": True}, status=404)
    context.update(_shown(node, trust_now, as_of=as_of, show_decayed=show_decayed, params=params))
    if as_of is None and trust_now == Trust.GROUND:
        context["drift"] = last_found().get(node.pk)
    return render(request, "dashboard/node.html", context)


def _shown(
    node: Node,
    trust_now: str,
    *,
    as_of: datetime | None,
    show_decayed: bool,
    params: dict[str, str],
) -> dict[str, Any]:
    """What the node page shows of a node the owner may see, as of `as_of` (None: now)."""
    # Rejected now: a tombstone in every past view too (shown_trust), its words never shown.
    trust = shown_trust([node.pk], as_of=as_of)[node.pk] if as_of else trust_now
    live = node.pk in live_at([node.pk], as_of=as_of)
    holding = held_by(node.pk) if as_of is None and node.is_live else None
    shown, later = _history(node, as_of)
    try:
        report = authority_report(node.pk, as_of=as_of)
    except GroveError as error:
        report = {"error": error.message}
    hood = neighbourhood(node.pk, as_of=as_of, show_decayed=show_decayed)
    decays = [e for e in shown if e.kind == EventKind.DECAYED and e.node_id == node.pk]
    return {
        "decay_event": decays[-1] if decays else None,
        "trust": trust,
        "live": live,
        "permanent": node.permanent
        and (as_of is None or (node.permanent_at is not None and node.permanent_at <= as_of)),
        "counted": False,
        "holding": holding,
        "events": shown,
        "later_events": later,
        "report": report,
        "hood": hood,
        "graph": _graph_svg(hood, node.pk, as_of=as_of, params=params),
        "trust_states": Trust.values,
        "backlinks": backlinks(node.pk, as_of=as_of),
        "outlinks": links(node.pk, into=False, as_of=as_of),
        "legend": LEGEND,
        "hood_list": hood_list(hood),
        "toggle_url": _node_href(_toggled(params))(node.pk),
        "replaced": replacement(node.pk, as_of=as_of),
        "history": history(node, as_of=as_of),
        "root_refusal": can_root(node, trust_now),
        "supersede_refusal": can_supersede(node, trust_now),
        "near_questions": open_questions_near([node.pk]) if as_of is None else [],
        "entities": mentions_of([node.pk]).get(node.pk, []),
    }


@require_POST
def extract_view(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """The owner makes body[start:end] of a node a node of its own (memory/extract.py); the new
    node's page on success, the parent's page with the refusal otherwise."""
    try:
        result = extract(
            node_id,
            start=request.POST.get("start", ""),
            end=request.POST.get("end", ""),
            signature=OWNER_ACTOR,
            actor=OWNER_ACTOR,
            owner=True,
        )
    except GroveError as refused:
        messages.error(request, f"Not extracted: {refused.message}")
        return redirect("node", node_id)
    messages.success(request, f"Extracted from node #{node_id}.")
    return redirect("node", result.node.pk)
