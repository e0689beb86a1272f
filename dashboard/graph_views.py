"""The graph view: a whole domain as one picture, with filters, zoom and pan that are plain
links (no JavaScript needed)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from dashboard.domain_graph import SIZES, domain_picture
from dashboard.graph_layout import HEIGHT, LEGEND, WIDTH, draw, picture, spread
from memory.models import Kind, Node, Trust

ZOOMS = (1, 2, 4)
PAN = 0.25  # of the window, per step


def _choice(value: str, allowed: list[str]) -> str:
    return value if value in allowed else ""


def _number(value: str, allowed: tuple[int, ...], default: int) -> int:
    return int(value) if value.isdigit() and int(value) in allowed else default


def _place(value: str, limit: int) -> float:
    try:
        number = float(value)
    except ValueError:
        return limit / 2
    return min(max(number, 0.0), float(limit)) if number == number else limit / 2  # NaN


def _window(view: str, zoom: int, cx: float, cy: float) -> str:
    if zoom == 1:
        return view
    w, h = WIDTH / zoom, HEIGHT / zoom
    return f"{cx - w / 2:.1f} {cy - h / 2:.1f} {w:.1f} {h:.1f}"


@require_GET
def domain_graph(request: HttpRequest) -> HttpResponse:
    domains = list(Node.objects.values_list("domain", flat=True).distinct().order_by("domain"))
    domain = _choice(request.GET.get("domain", ""), domains) or (domains[0] if domains else "")
    trust = _choice(request.GET.get("trust", ""), list(Trust.values))
    kind = _choice(request.GET.get("kind", ""), list(Kind.values))
    kinds = [k for k, _ in LEGEND]
    hide = [k for k in request.GET.getlist("hide") if k in kinds]
    size = _number(request.GET.get("size", ""), SIZES, 150)
    zoom = _number(request.GET.get("zoom", ""), ZOOMS, 1)
    cx, cy = _place(request.GET.get("cx", ""), WIDTH), _place(request.GET.get("cy", ""), HEIGHT)
    picked = domain_picture(domain, trust=trust, kind=kind, hide=hide, size=size)
    spread(picked.hood)
    drawn = draw(picked.hood, href=lambda i: reverse("node", args=[i]))
    drawn["view"] = _window(drawn["view"], zoom, cx, cy)
    base: dict[str, Any] = {"domain": domain, "trust": trust, "kind": kind, "size": size}
    base = {k: v for k, v in base.items() if v}

    def link(**changes: Any) -> str:
        query = {**base, "zoom": zoom, "cx": f"{cx:.0f}", "cy": f"{cy:.0f}", **changes}
        return "?" + urlencode([*query.items(), *(("hide", h) for h in hide)])

    step_x, step_y = WIDTH / zoom * PAN, HEIGHT / zoom * PAN
    title = f"The {domain} domain: the {len(picked.hood.nodes)} best-linked live nodes"
    context = {
        "graph": picture(drawn, title=title),
        "hood": picked.hood,
        "hood_list": [(node, []) for node in picked.hood.nodes.values()],
        "matching": picked.matching,
        "domains": domains,
        "filters": {"domain": domain, "trust": trust, "kind": kind, "hide": hide, "size": size},
        "trusts": Trust.values,
        "kinds": Kind.values,
        "sizes": SIZES,
        "legend": LEGEND,
        "trust_states": Trust.values,
        "zoom": zoom,
        "zoom_in": link(zoom=min(zoom * 2, ZOOMS[-1])) if zoom < ZOOMS[-1] else "",
        "zoom_out": link(zoom=zoom // 2) if zoom > 1 else "",
        "pan": {
            "left": link(cx=f"{max(cx - step_x, 0):.0f}"),
            "right": link(cx=f"{min(cx + step_x, WIDTH):.0f}"),
            "up": link(cy=f"{max(cy - step_y, 0):.0f}"),
            "down": link(cy=f"{min(cy + step_y, HEIGHT):.0f}"),
        }
        if zoom > 1
        else {},
    }
    return render(request, "dashboard/graph.html", context)
