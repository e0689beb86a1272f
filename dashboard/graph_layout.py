"""The neighbourhood picture: layout maths here, markup in the node page's `graph` partial.

Rings are ellipses (the picture uses the page's width, not a square in the middle of it). Each
label is placed greedily where it overlaps no circle and no label placed before it, trying a
few spots around its node; a label that fits nowhere is left out, its words still in the node's
tooltip and in the lists beside the picture. Titles are distinct on one picture
(dashboard.labels.distinct_titles). "+N more" pills take a slot on their ring and hang from the
hub they stand for by a line. Edges carry no words: each relation has one line style, the same
on every page, named by the legend (LEGEND); a line's tooltip names its relation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from dashboard.graph import TRUST_COLOURS, GraphNode, Neighbourhood
from review.queue import SUPERSEDES

# The legend: every relation a picture may draw and its words, the same on every page whatever
# the picture holds (line styles in grove.css, .ek-<kind>; the question links share one style).
LEGEND: tuple[tuple[str, str], ...] = (
    ("derived_from", "came from"),
    (SUPERSEDES, "replaces"),
    ("responds_to", "next turn"),
    ("cites", "cites, links to"),
    ("nests", "has as a part"),
    ("asks_about", "question links: asks about, feeds, answers, reopens"),
    ("similar", "similar, made by sleep"),
    ("consolidated_into", "merged into, made by sleep"),
)
EDGE_WORDS: dict[str, str] = {
    **dict(LEGEND),
    "asks_about": "asks about",
    "feeds": "feeds",
    "answers": "answers",
    "reopens": "reopens",
}
WIDTH, HEIGHT = 1000, 620
RADII = ((0, 0), (250, 165), (440, 270))  # (rx, ry) per ring
NODE_R = (28, 20, 14)
TITLE_FONT = 12
MIN_VIEW_WIDTH = 640
PAD = 10
Box = tuple[float, float, float, float]


@dataclass
class _Slot:
    angle: float
    ring: int
    node: int | None = None  # None: a "+N more" pill
    hidden: int = 0
    parent: int | None = None


def _f(value: float) -> str:
    """A coordinate as SVG text, one decimal (formatted here, not by a template filter: a
    picture has hundreds of numbers)."""
    return f"{value:.1f}"


def _text_box(x: float, y: float, text: str, font: int, anchor: str) -> Box:
    width = 0.58 * font * len(text)
    left = {"start": x, "end": x - width, "middle": x - width / 2}[anchor]
    return (left, y - font + 2, left + width, y + 3)


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _free(box: Box, taken: list[Box]) -> bool:
    return not any(_overlaps(box, other) for other in taken)


def _slots(hood: Neighbourhood) -> list[_Slot]:
    """Angles for the inner ring (plus its pill) and, in each inner node's sector, its children
    (plus its pill), so no outer edge cuts across the centre."""
    inner = [g.id for g in hood.nodes.values() if g.ring == 1]
    count = len(inner) + (1 if hood.more[1] else 0)
    step = 2 * math.pi / max(count, 1)
    slots = [_Slot(-math.pi / 2 + step * k, 1, node=i) for k, i in enumerate(inner)]
    if hood.more[1]:
        slots.append(_Slot(-math.pi / 2 + step * len(inner), 1, hidden=hood.more[1]))
    sector = min(step, math.radians(160)) * 0.9
    for slot in list(slots):
        if slot.node is None:
            continue
        kids = [g.id for g in hood.nodes.values() if g.ring == 2 and g.parent == slot.node]
        hidden = hood.more_by_parent.get(slot.node, 0)
        n = len(kids) + (1 if hidden else 0)
        for j, i in enumerate(kids):
            slots.append(_Slot(slot.angle + sector * ((j + 0.5) / n - 0.5), 2, node=i))
        if hidden:
            angle = slot.angle + sector * ((n - 0.5) / n - 0.5)
            slots.append(_Slot(angle, 2, hidden=hidden, parent=slot.node))
    return slots


def _place_label(
    g: GraphNode, r: float, ux: float, uy: float, taken: list[Box]
) -> dict[str, Any] | None:
    text = g.title
    anchor = "start" if ux > 0.35 else "end" if ux < -0.35 else "middle"
    outward = (g.x + ux * (r + 5), g.y + uy * (r + 5) + (TITLE_FONT if uy > 0.35 else 4), anchor)
    below = (g.x, g.y + r + TITLE_FONT + 2, "middle")
    above = (g.x, g.y - r - 5, "middle")
    right = (g.x + r + 5, g.y + 4, "start")
    left = (g.x - r - 5, g.y + 4, "end")
    candidates = [below, above, right, left] if g.ring == 0 else [outward, below, above]
    for x, y, anchor in candidates:
        box = _text_box(x, y, text, TITLE_FONT, anchor)
        if _free(box, taken):
            taken.append(box)
            return {"x": _f(x), "y": _f(y), "anchor": anchor, "text": text, "box": box}
    return None


def layout(hood: Neighbourhood, *, href: Callable[[int], str]) -> dict[str, Any]:
    """Positions for every node, pill, edge and label, and the viewBox around them."""
    return _drawn(hood, _rings(hood), href=href)


def _rings(hood: Neighbourhood) -> list[dict[str, Any]]:
    """A neighbourhood's places: the centre, its rings, and the pills that stand for the rest."""
    cx, cy = WIDTH / 2, HEIGHT / 2
    centre = hood.nodes[hood.centre]
    centre.x, centre.y = cx, cy
    pills = []
    for slot in _slots(hood):
        rx, ry = RADII[slot.ring]
        x, y = cx + rx * math.cos(slot.angle), cy + ry * math.sin(slot.angle)
        if slot.node is not None:
            hood.nodes[slot.node].x, hood.nodes[slot.node].y = x, y
            continue
        text = f"+{slot.hidden} more"
        width = 0.58 * 11 * len(text) + 14
        target = slot.parent if slot.parent is not None else hood.centre
        hub = hood.nodes[target]
        pills.append(
            {
                "x": _f(x - width / 2), "y": _f(y - 11), "w": _f(width), "h": 22, "tx": _f(x),
                "ty": _f(y + 4), "hub_x": _f(hub.x), "hub_y": _f(hub.y), "cx": _f(x), "cy": _f(y),
                "text": text, "href": reverse("browse_nodes") + f"?near={target}",
                "tip": f"{slot.hidden} more neighbours of #{target} not drawn: list them",
                "box": (x - width / 2, y - 11, x + width / 2, y + 11),
            }
        )  # fmt: skip
    return pills


def spread(hood: Neighbourhood, *, seed: int = 7) -> None:
    """A whole domain's places: a force-directed layout (networkx's Fruchterman-Reingold, seeded,
    so a picture is the same on every visit), scaled to the picture the rings use. The
    best-linked nodes are drawn largest (ring 1); the rest small (ring 2)."""
    import networkx as nx  # only the domain view pays its import

    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(hood.nodes)
    graph.add_edges_from((a, b) for a, b, _ in hood.edges)
    if not hood.nodes:
        return
    # A longer rest length than the default (1/sqrt(n)) spreads each hub's cluster so its
    # members stay apart; the seed makes a picture the same on every visit.
    spacing = 4 / math.sqrt(max(len(hood.nodes), 1))
    places = nx.spring_layout(graph, k=spacing, seed=seed, iterations=100)
    xs = [float(p[0]) for p in places.values()]
    ys = [float(p[1]) for p in places.values()]
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    for node_id, (x, y) in places.items():
        g = hood.nodes[node_id]
        g.x = 40 + (float(x) - min(xs)) / span_x * (WIDTH - 80)
        g.y = 40 + (float(y) - min(ys)) / span_y * (HEIGHT - 80)


def draw(hood: Neighbourhood, *, href: Callable[[int], str]) -> dict[str, Any]:
    """A picture whose places are set (spread): the same labels, edges and view as layout()."""
    return _drawn(hood, [], href=href)


def _drawn(
    hood: Neighbourhood, pills: list[dict[str, Any]], *, href: Callable[[int], str]
) -> dict[str, Any]:
    cx, cy = WIDTH / 2, HEIGHT / 2
    taken: list[Box] = [pill["box"] for pill in pills]
    taken += [(g.x - NODE_R[g.ring], g.y - NODE_R[g.ring], g.x + NODE_R[g.ring],
               g.y + NODE_R[g.ring]) for g in hood.nodes.values()]  # fmt: skip
    # Arrowheads are obstacles too: a label drawn over one would hide which way the edge runs.
    for a, b, _ in hood.edges:
        x2, y2 = _tip(hood.nodes[a], hood.nodes[b])
        taken.append((x2 - 6, y2 - 6, x2 + 6, y2 + 6))
    nodes = []
    for g in sorted(hood.nodes.values(), key=lambda g: g.ring):
        r = NODE_R[g.ring]
        dx, dy = g.x - cx, g.y - cy
        norm = math.hypot(dx, dy) or 1.0
        label = _place_label(g, r, dx / norm, dy / norm, taken)
        nodes.append(_node_view(g, r, label, href))
    edges = [_edge_view(hood, a, b, kind) for a, b, kind in hood.edges]
    return {
        "view": _view_box(taken),
        "nodes": sorted(nodes, key=lambda n: -n["ring"]),
        "edges": edges,
        "pills": pills,
        "edge_kinds": sorted({kind for _, _, kind in hood.edges}),
    }


def _node_view(
    g: GraphNode, r: float, label: dict[str, Any] | None, href: Callable[[int], str]
) -> dict[str, Any]:
    lifecycle = "live" if g.live else "decayed"
    if g.permanent:
        lifecycle += ", permanent"
    tip = (
        f"sealed #{g.id}"
        if g.sealed
        else f"#{g.id} {g.kind} · {g.trust} · {lifecycle}" + (f": {g.label}" if g.label else "")
    )
    classes = f"gnode ring{g.ring} trust-{g.trust}"
    classes += ("" if g.live else " decayed") + (" permanent" if g.permanent else "")
    id_text = f"#{g.id}"
    fits = 0.6 * 10 * len(id_text) <= 2 * r - 6
    return {
        "id": g.id, "ring": g.ring, "href": href(g.id), "classes": classes, "tip": tip,
        "x": _f(g.x), "y": _f(g.y), "idy": _f(g.y + 4), "r": r,
        "fill": TRUST_COLOURS.get(g.trust, "#6b7a86"),
        "id_text": id_text if fits else "", "label": label,
    }  # fmt: skip


def _tip(na: GraphNode, nb: GraphNode) -> tuple[float, float]:
    """Where an edge from na to nb ends: just outside nb's circle."""
    dx, dy = nb.x - na.x, nb.y - na.y
    length = math.hypot(dx, dy) or 1.0
    rb = NODE_R[nb.ring] + 4
    return nb.x - dx * rb / length, nb.y - dy * rb / length


def _edge_view(hood: Neighbourhood, a: int, b: int, kind: str) -> dict[str, Any]:
    na, nb = hood.nodes[a], hood.nodes[b]
    dx, dy = nb.x - na.x, nb.y - na.y
    length = math.hypot(dx, dy) or 1.0
    ra = NODE_R[na.ring] + 2
    x1, y1 = na.x + dx * ra / length, na.y + dy * ra / length
    x2, y2 = _tip(na, nb)
    words = EDGE_WORDS.get(kind, kind)
    return {
        "x1": _f(x1), "y1": _f(y1), "x2": _f(x2), "y2": _f(y2), "kind": kind,
        "faded": not (na.live and nb.live), "tip": f"#{a} {words} #{b}",
    }  # fmt: skip


def _view_box(boxes: list[Box]) -> str:
    left = min(b[0] for b in boxes) - PAD
    top = min(b[1] for b in boxes) - PAD
    right = max(b[2] for b in boxes) + PAD
    bottom = max(b[3] for b in boxes) + PAD
    if right - left < MIN_VIEW_WIDTH:
        middle = (left + right) / 2
        left, right = middle - MIN_VIEW_WIDTH / 2, middle + MIN_VIEW_WIDTH / 2
    return " ".join(_f(v) for v in (left, top, right - left, bottom - top))


def render_svg(hood: Neighbourhood, *, href: Callable[[int], str], title: str) -> SafeString:
    """The neighbourhood as an <svg> (the node page's `graph` partial; the template escapes
    every text)."""
    return picture(layout(hood, href=href), title=title)


def picture(g: dict[str, Any], *, title: str) -> SafeString:
    """A laid-out picture as its <svg> (the template escapes every text)."""
    context = {"g": g, "title": title}
    return mark_safe(render_to_string("dashboard/node.html#graph", context))  # autoescaped
