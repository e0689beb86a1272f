"""A node's graph neighbourhood as a picture: server-side radial layout, drawn as inline SVG.

Centre node, its 1-hop neighbours on an inner ring, their neighbours on an outer ring, each ring
capped (the rest counted as "+N more"). Nodes are coloured by trust and marked by lifecycle;
decayed neighbours appear (faded) only when asked. Every node links to its own page.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from memory.models import Trust
from memory.recall import live_at
from memory.trust import trust_map
from review.queue import drawn_as_supersedes

RING_CAP = 12
EDGE_SCAN = 3000  # rows read per hop at most: a hub with thousands of children stays cheap
LABEL_CHARS = 90
WIDTH, HEIGHT = 760, 640
RADII = (0, 150, 275)
NODE_R = (30, 22, 17)
TRUST_COLOURS = {
    Trust.GROUND: "#2f6b4f",
    Trust.PROPOSED: "#b8860b",
    Trust.UNREVIEWED: "#6b7a86",
    Trust.SUPERSEDED: "#8a6d9e",
    Trust.REJECTED: "#a12b2b",
    Trust.SEALED: "#333333",
}


def _svg(template: str, *args: object) -> str:
    """format_html with floats rounded to one decimal (format_html escapes every argument, so
    format specs cannot be used inside the template)."""
    return format_html(template, *(f"{a:.1f}" if isinstance(a, float) else a for a in args))


@dataclass
class GraphNode:
    id: int
    ring: int
    kind: str = ""
    trust: str = Trust.UNREVIEWED
    live: bool = True
    permanent: bool = False
    permanent_at: Any = None
    label: str = ""
    parent: int | None = None
    x: float = 0.0
    y: float = 0.0

    @property
    def sealed(self) -> bool:
        return self.trust == Trust.SEALED


@dataclass
class Neighbourhood:
    centre: int
    nodes: dict[int, GraphNode] = field(default_factory=dict)
    edges: list[tuple[int, int, str]] = field(default_factory=list)
    more: list[int] = field(default_factory=lambda: [0, 0, 0])  # hidden by the cap, per ring
    faded: int = 0  # decayed neighbours drawn (only when asked)
    hidden_decayed: int = 0  # decayed neighbours left out (not asked)


def _db_time(value: datetime) -> str:
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ")


def _edges_of(ids: list[int], as_of: datetime | None) -> list[tuple[int, int, str]]:
    """Edges touching any of `ids` (both directions), existing by as_of (store clock)."""
    if not ids:
        return []
    marks = ",".join(["%s"] * len(ids))
    when, when_params = ("AND created_at <= %s", [_db_time(as_of)]) if as_of else ("", [])
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT from_node_id, to_node_id, kind FROM memory_edge WHERE from_node_id IN "
            f"({marks}) {when} UNION SELECT from_node_id, to_node_id, kind FROM memory_edge "
            f"WHERE to_node_id IN ({marks}) {when} LIMIT %s",
            [*ids, *when_params, *ids, *when_params, EDGE_SCAN],
        )
        return cursor.fetchall()


def _node_rows(ids: Iterable[int], as_of: datetime | None) -> dict[int, dict[str, Any]]:
    ids = list(ids)
    if not ids:
        return {}
    marks = ",".join(["%s"] * len(ids))
    when, params = ("AND created_at <= %s", [_db_time(as_of)]) if as_of else ("", [])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, kind, permanent, permanent_at, substr(body, 1, %s) FROM memory_node "
            f"WHERE id IN ({marks}) {when}",
            [LABEL_CHARS + 1, *ids, *params],
        )
        return {
            row[0]: {
                "kind": row[1],
                "permanent": bool(row[2]),
                "permanent_at": row[3],
                "body": row[4],
            }
            for row in cursor.fetchall()
        }


def _label(body: str) -> str:
    text = " ".join(body.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def neighbourhood(
    node_id: int,
    *,
    as_of: datetime | None = None,
    show_decayed: bool = False,
    cap: int = RING_CAP,
) -> Neighbourhood:
    """The 1-2 hop neighbourhood of a node, as the graph stands now or stood at `as_of` (store
    clock created_at for nodes and edges; audit clock Event.at for lifecycle and trust).

    Decayed neighbours are left out unless `show_decayed`; each ring keeps at most `cap` nodes.
    Sealed nodes carry no label (only their id). Refuses nothing: an unknown id gives a
    neighbourhood with no nodes.
    """
    hood = Neighbourhood(centre=node_id)
    rings: list[list[int]] = [[node_id], [], []]
    parents: dict[int, int] = {}
    edges: set[tuple[int, int, str]] = set()
    seen = {node_id}
    for hop in (1, 2):
        found = _edges_of(rings[hop - 1], as_of)
        candidates: dict[int, int] = {}
        for a, b, kind in found:
            edges.add((a, b, kind))
            for near, far in ((a, b), (b, a)):
                if near in rings[hop - 1] and far not in seen:
                    candidates.setdefault(far, near)
        rows = _node_rows(candidates, as_of)  # drops nodes not yet written at as_of
        alive = live_at(rows, as_of=as_of)
        kept = [i for i in sorted(rows) if show_decayed or i in alive]
        hood.hidden_decayed += len(rows) - len(kept)
        # Spread the cap over parents (round robin), so one hub does not fill the outer ring.
        by_parent: dict[int, list[int]] = {}
        for i in kept:
            by_parent.setdefault(candidates[i], []).append(i)
        chosen: list[int] = []
        queues = [by_parent[p] for p in rings[hop - 1] if p in by_parent]
        while len(chosen) < cap and any(queues):
            for queue in queues:
                if queue and len(chosen) < cap:
                    chosen.append(queue.pop(0))
        hood.more[hop] = len(kept) - len(chosen)
        rings[hop] = chosen
        seen.update(chosen)
        parents.update({i: candidates[i] for i in chosen})
        for i in chosen:
            hood.nodes[i] = _graph_node(i, hop, rows[i], parent=candidates[i])
    centre_rows = _node_rows([node_id], None)
    if node_id not in centre_rows:
        return hood
    hood.nodes[node_id] = _graph_node(node_id, 0, centre_rows[node_id], parent=None)
    ids = list(hood.nodes)
    trusts = trust_map(ids, as_of=as_of)
    sealed_now = trust_map(ids) if as_of is not None else trusts
    alive = live_at(ids, as_of=as_of)
    for i, gnode in hood.nodes.items():
        gnode.trust = Trust.SEALED if sealed_now[i] == Trust.SEALED else trusts[i]
        gnode.live = i in alive
        if gnode.sealed or gnode.trust == Trust.REJECTED:  # no words of a tombstone either
            gnode.label = ""
        if as_of is not None and gnode.permanent:
            at = gnode.permanent_at
            gnode.permanent = at is None or str(at)[:19] <= _db_time(as_of)[:19]
    hood.faded = sum(1 for g in hood.nodes.values() if g.ring and not g.live)
    hood.edges = drawn_as_supersedes(
        sorted(e for e in edges if e[0] in hood.nodes and e[1] in hood.nodes)
    )
    _layout(hood, rings)
    return hood


def _graph_node(i: int, ring: int, row: dict[str, Any], *, parent: int | None) -> GraphNode:
    return GraphNode(
        id=i,
        ring=ring,
        kind=row["kind"],
        permanent=row["permanent"],
        permanent_at=row["permanent_at"],
        label=_label(row["body"]),
        parent=parent,
    )


def _layout(hood: Neighbourhood, rings: list[list[int]]) -> None:
    cx, cy = WIDTH / 2, HEIGHT / 2
    centre = hood.nodes[hood.centre]
    centre.x, centre.y = cx, cy
    angles: dict[int, float] = {}
    inner = rings[1]
    for k, i in enumerate(inner):
        angles[i] = -math.pi / 2 + 2 * math.pi * k / max(len(inner), 1)
    # Each parent's children fan out in a sector centred on the parent's angle (at most 160
    # degrees), so an edge from the inner ring to the outer one never cuts across the centre.
    sector = min(2 * math.pi / max(len(inner), 1), math.radians(160))
    children: dict[int, list[int]] = {}
    for i in rings[2]:
        children.setdefault(hood.nodes[i].parent, []).append(i)
    for parent, kids in children.items():
        base = angles.get(parent, -math.pi / 2)
        for j, i in enumerate(kids):
            angles[i] = base + sector * ((j + 0.5) / len(kids) - 0.5)
    for i, angle in angles.items():
        radius = RADII[hood.nodes[i].ring]
        hood.nodes[i].x = cx + radius * math.cos(angle)
        hood.nodes[i].y = cy + radius * math.sin(angle)


def render_svg(hood: Neighbourhood, *, href: Callable[[int], str], title: str) -> SafeString:
    """The neighbourhood as an <svg>: edges with their kind, nodes as links to their pages.
    Every text (labels, titles, kinds) is escaped by format_html."""
    # Crop to the rings in use: a lone node or a single ring should not float in white space.
    outer = max((g.ring for g in hood.nodes.values()), default=0)
    extent = RADII[outer] + NODE_R[outer] + 34
    left, top = WIDTH / 2 - extent, HEIGHT / 2 - extent
    parts: list[str] = [
        _svg(
            '<svg class="graph" viewBox="{} {} {} {}" role="img" aria-label="{}" '
            'xmlns="http://www.w3.org/2000/svg"><title>{}</title>'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
            'fill="#7d8a84"/></marker></defs>',
            left,
            top,
            2 * extent,
            2 * extent,
            title,
            title,
        )
    ]
    for a, b, kind in hood.edges:
        na, nb = hood.nodes[a], hood.nodes[b]
        dx, dy = nb.x - na.x, nb.y - na.y
        length = math.hypot(dx, dy) or 1.0
        ra, rb = NODE_R[na.ring] + 2, NODE_R[nb.ring] + 4
        x1, y1 = na.x + dx * ra / length, na.y + dy * ra / length
        x2, y2 = nb.x - dx * rb / length, nb.y - dy * rb / length
        faded = " faded" if not (na.live and nb.live) else ""
        parts.append(
            _svg(
                '<g class="gedge{}"><line x1="{}" y1="{}" x2="{}" y2="{}" '
                'marker-end="url(#arrow)"/><text x="{}" y="{}" text-anchor="middle">'
                "{}</text><title>#{} {} #{}</title></g>",
                faded,
                x1,
                y1,
                x2,
                y2,
                (na.x + nb.x) / 2,
                (na.y + nb.y) / 2 - 3,
                kind,
                a,
                kind,
                b,
            )
        )
    for gnode in sorted(hood.nodes.values(), key=lambda g: -g.ring):
        r = NODE_R[gnode.ring]
        classes = f"gnode ring{gnode.ring} trust-{gnode.trust}"
        classes += "" if gnode.live else " decayed"
        classes += " permanent" if gnode.permanent else ""
        lifecycle = "live" if gnode.live else "decayed"
        if gnode.permanent:
            lifecycle += ", permanent"
        tip = (
            f"sealed #{gnode.id}"
            if gnode.sealed
            else f"#{gnode.id} {gnode.kind} · {gnode.trust} · {lifecycle}: {gnode.label}"
        )
        caption = "sealed" if gnode.sealed else gnode.kind
        parts.append(
            _svg(
                '<a href="{}" id="gnode-{}" class="{}" aria-label="{}"><title>{}</title>'
                '<circle cx="{}" cy="{}" r="{}" fill="{}"/>'
                '<text x="{}" y="{}" text-anchor="middle" class="gid">#{}</text>'
                '<text x="{}" y="{}" text-anchor="middle" class="gkind">{}</text></a>',
                href(gnode.id),
                gnode.id,
                classes,
                tip,
                tip,
                gnode.x,
                gnode.y,
                r,
                TRUST_COLOURS.get(gnode.trust, "#6b7a86"),
                gnode.x,
                gnode.y + 4,
                gnode.id,
                gnode.x,
                gnode.y + r + 13,
                caption,
            )
        )
    for ring, hidden in enumerate(hood.more):
        if hidden:
            parts.append(
                _svg(
                    '<text x="{}" y="{}" class="gmore" text-anchor="end">+{} more at {} hop{}'
                    "</text>",
                    left + 2 * extent - 6,
                    top + 2 * extent - 8 - 16 * (2 - ring),
                    hidden,
                    ring,
                    "s" if ring > 1 else "",
                )
            )
    parts.append("</svg>")
    return mark_safe("".join(str(p) for p in parts))  # each part escaped by format_html
