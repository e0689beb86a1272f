"""The node page: body, four axes, both clocks, counters, events, authority, neighbourhood."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from dashboard.asof import widget_value
from dashboard.graph import TRUST_COLOURS, neighbourhood, render_svg
from dashboard.view_helpers import OWNER_ACTOR, HtmxHttpRequest, as_of_param
from memory.authority import authority_report
from memory.errors import GroveError
from memory.models import Event, Node, Trust
from memory.read import read
from memory.trust import trust_map
from memory.visibility import live_at
from review.ceremony import can_root, can_supersede


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


@require_GET
def node_page(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """Viewing a live node now is a read (memory read(): access_count +1). A decayed or rejected
    node is shown to the owner from the row itself, marked, and not counted; an as-of view shows
    trust and lifecycle as they stood then and counts nothing; a sealed node shows only "sealed"."""
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
    if as_of is not None and node.created_at > as_of:
        return render(request, "dashboard/node.html", {**context, "absent": True}, status=404)
    trust = trust_map([node.pk], as_of=as_of)[node.pk] if as_of else trust_now
    live = node.pk in live_at([node.pk], as_of=as_of)
    counted = False
    if as_of is None and node.is_live and trust_now != Trust.REJECTED:
        read(node.pk, actor=OWNER_ACTOR)
        node.refresh_from_db()
        counted = True
    events = (
        Event.objects.filter(Q(node=node) | Q(related_node=node))
        .select_related("token")
        .order_by("at", "id")
    )
    later = 0
    if as_of is not None:
        later = events.filter(at__gt=as_of).count()
        events = events.filter(at__lte=as_of)
    try:
        report = authority_report(node.pk, as_of=as_of)
    except GroveError as error:
        report = {"error": error.message}
    hood = neighbourhood(node.pk, as_of=as_of, show_decayed=show_decayed)
    title = f"Graph neighbourhood of node #{node.pk}" + (
        f" as of {as_of:%Y-%m-%d %H:%M} UTC" if as_of else ""
    )
    context.update(
        trust=trust,
        live=live,
        permanent=node.permanent
        and (as_of is None or (node.permanent_at is not None and node.permanent_at <= as_of)),
        counted=counted,
        events=list(events[:500]),
        later_events=later,
        report=report,
        hood=hood,
        graph=render_svg(hood, href=_node_href(params), title=title),
        trust_colours={str(k): v for k, v in TRUST_COLOURS.items()},
        toggle_url=_node_href(_toggled(params))(node.pk),
        # The acts apply now, whatever time the page shows: asked of the acts' own rules.
        rootable=can_root(node, trust_now) is None,
        supersedable=can_supersede(node, trust_now) is None,
    )
    return render(request, "dashboard/node.html", context)
