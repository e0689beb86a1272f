"""A node's graph neighbourhood: which nodes and edges the picture shows, and what points here.

Centre node, its 1-hop neighbours on an inner ring, their neighbours on an outer ring. A hub is
collapsed to its top neighbours (permanent first, then most read, then newest), the rest counted
as "+N more": at most `cap` on the inner ring and PER_PARENT beside each inner node. Nodes carry
trust and lifecycle; decayed neighbours appear (faded) only when asked. Everything is judged as
the graph stands now or stood at `as_of` (store clock created_at for nodes and edges; audit clock
Event.at for trust and lifecycle, through memory.trust and memory.visibility). The layout and
the SVG live in dashboard.graph_layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.db.models.functions import Substr

from dashboard.labels import distinct_titles, short_title
from memory.models import Edge, Node, Trust
from memory.visibility import first_by_id, live_at, shown_trust
from review.queue import drawn_as_supersedes

RING_CAP = 12
PER_PARENT = 3
OUTER_CAP = 30
EDGE_SCAN = 3000  # rows read per hop at most: a hub with thousands of children stays cheap
LABEL_CHARS = 90
BACKLINKS_SHOWN = 30
TRUST_COLOURS: dict[str, str] = {
    Trust.GROUND: "#2f6b4f",
    Trust.PROPOSED: "#b8860b",
    Trust.UNREVIEWED: "#6b7a86",
    Trust.SUPERSEDED: "#8a6d9e",
    Trust.REJECTED: "#a12b2b",
    Trust.SEALED: "#333333",
}


@dataclass
class GraphNode:
    id: int
    ring: int
    kind: str = ""
    trust: str = Trust.UNREVIEWED
    live: bool = True
    permanent: bool = False
    permanent_at: Any = None
    label: str = ""  # the first words of the body, for the tooltip ("" when sealed)
    head: str = ""  # the body's start as written (headings intact), for the title
    title: str = ""  # a short title drawn beside the circle
    source: str = ""
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
    more: list[int] = field(default_factory=lambda: [0, 0, 0])  # hidden by the caps, per ring
    more_by_parent: dict[int, int] = field(default_factory=dict)  # outer ring, per inner node
    faded: int = 0  # decayed neighbours drawn (only when asked)
    hidden_decayed: int = 0  # decayed neighbours left out (not asked)


def _edges(as_of: datetime | None) -> QuerySet[Edge]:
    return Edge.objects.filter(created_at__lte=as_of) if as_of else Edge.objects.all()


def _edges_of(ids: list[int], as_of: datetime | None) -> list[tuple[int, int, str]]:
    """Edges touching any of `ids` (both directions), existing by as_of (store clock)."""
    if not ids:
        return []
    fields = ("from_node_id", "to_node_id", "kind")
    out = _edges(as_of).filter(from_node_id__in=ids).values_list(*fields)
    into = _edges(as_of).filter(to_node_id__in=ids).values_list(*fields)
    return list(out.union(into)[:EDGE_SCAN])


def node_rows(ids: list[int], as_of: datetime | None) -> dict[int, dict[str, Any]]:
    if not ids:
        return {}
    qs = Node.objects.filter(pk__in=ids)
    if as_of is not None:
        qs = qs.filter(created_at__lte=as_of)
    rows = qs.annotate(head=Substr("body", 1, LABEL_CHARS + 1)).values(
        "id", "kind", "permanent", "permanent_at", "head", "source", "access_count"
    )
    return {row["id"]: dict(row) for row in rows}


def _label(body: str) -> str:
    text = " ".join(body.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _rank(row: dict[str, Any]) -> tuple[Any, ...]:
    """Which neighbours a hub keeps: permanent first, then most read, then newest."""
    return (not row["permanent"], -row["access_count"], -row["id"])


def _choose(
    kept: list[int],
    rows: dict[int, dict[str, Any]],
    parents: dict[int, int],
    *,
    cap: int,
    per_parent: int,
) -> tuple[list[int], dict[int, int]]:
    """The top `cap` of `kept`, at most `per_parent` per parent; and how many each parent
    left out."""
    chosen: list[int] = []
    taken: dict[int, int] = {}
    left: dict[int, int] = {}
    for i in sorted(kept, key=lambda i: _rank(rows[i])):
        parent = parents[i]
        if len(chosen) < cap and taken.get(parent, 0) < per_parent:
            chosen.append(i)
            taken[parent] = taken.get(parent, 0) + 1
        else:
            left[parent] = left.get(parent, 0) + 1
    return chosen, left


def neighbourhood(
    node_id: int,
    *,
    as_of: datetime | None = None,
    show_decayed: bool = False,
    cap: int = RING_CAP,
) -> Neighbourhood:
    """The 1-2 hop neighbourhood of a node, now or at `as_of` (see the module docstring).

    Sealed nodes carry no label or title from their words. Refuses nothing: an unknown id gives
    a neighbourhood with no nodes.
    """
    hood = Neighbourhood(centre=node_id)
    rings: list[list[int]] = [[node_id], [], []]
    edges: set[tuple[int, int, str]] = set()
    seen = {node_id}
    for hop in (1, 2):
        candidates: dict[int, int] = {}
        for a, b, kind in _edges_of(rings[hop - 1], as_of):
            edges.add((a, b, kind))
            for near, far in ((a, b), (b, a)):
                if near in rings[hop - 1] and far not in seen:
                    candidates.setdefault(far, near)
        rows = node_rows(list(candidates), as_of)  # drops nodes not yet written at as_of
        alive = live_at(rows, as_of=as_of)
        kept = [i for i in rows if show_decayed or i in alive]
        hood.hidden_decayed += len(rows) - len(kept)
        if hop == 1:
            chosen, left = _choose(kept, rows, candidates, cap=cap, per_parent=cap)
        else:
            chosen, left = _choose(kept, rows, candidates, cap=OUTER_CAP, per_parent=PER_PARENT)
        hood.more[hop] = len(kept) - len(chosen)
        if hop == 2:
            hood.more_by_parent = left
        rings[hop] = chosen
        seen.update(chosen)
        for i in chosen:
            hood.nodes[i] = graph_node(i, hop, rows[i], parent=candidates[i])
    centre_rows = node_rows([node_id], None)
    if node_id not in centre_rows:
        return hood
    hood.nodes[node_id] = graph_node(node_id, 0, centre_rows[node_id], parent=None)
    judge(hood, as_of)
    hood.edges = drawn_as_supersedes(
        sorted(e for e in edges if e[0] in hood.nodes and e[1] in hood.nodes)
    )
    return hood


def judge(hood: Neighbourhood, as_of: datetime | None) -> None:
    """Trust, lifecycle and permanence as they stood; no words for what is sealed or rejected
    now (shown_trust: a past view shows such a node as it is now, a tombstone)."""
    ids = list(hood.nodes)
    trusts = shown_trust(ids, as_of=as_of)
    alive = live_at(ids, as_of=as_of)
    for i, gnode in hood.nodes.items():
        gnode.trust = trusts[i]
        gnode.live = i in alive
        if gnode.sealed or gnode.trust == Trust.REJECTED:  # no words of a tombstone either
            gnode.label = ""
            gnode.head = ""
        gnode.title = short_title(gnode.head, source=gnode.source, node_id=i, trust=gnode.trust)
        if as_of is not None and gnode.permanent:
            at = gnode.permanent_at
            gnode.permanent = at is None or at <= as_of
    titles = distinct_titles(
        {i: g.title for i, g in hood.nodes.items()}, {i: g.head for i, g in hood.nodes.items()}
    )
    for i, gnode in hood.nodes.items():
        gnode.title, gnode.head = titles[i], ""
    hood.faded = sum(1 for g in hood.nodes.values() if g.ring and not g.live)


def graph_node(i: int, ring: int, row: dict[str, Any], *, parent: int | None) -> GraphNode:
    return GraphNode(
        id=i,
        ring=ring,
        kind=row["kind"],
        permanent=row["permanent"],
        permanent_at=row["permanent_at"],
        label=_label(row["head"]),
        head=row["head"],
        source=row["source"],
        parent=parent,
    )


def backlinks(node_id: int, *, as_of: datetime | None = None) -> dict[str, Any]:
    """What points here (links into the node)."""
    return links(node_id, into=True, as_of=as_of)


def links(node_id: int, *, into: bool, as_of: datetime | None = None) -> dict[str, Any]:
    """A node's links one way (into it: what points here; else what it points to), newest first,
    at most BACKLINKS_SHOWN, each with its relation, trust and a short title (none from sealed or
    rejected words), and the total: with the picture's caps, every link is drawn or listed.
    Judged now or at `as_of` like the picture."""
    here, there = ("to_node", "from_node") if into else ("from_node", "to_node")
    qs = _edges(as_of).filter(**{here: node_id})
    if as_of is not None:
        qs = qs.filter(**{f"{there}__created_at__lte": as_of})
    total = qs.count()
    newest = first_by_id(qs, BACKLINKS_SHOWN, newest=True)
    pairs = list(newest.values_list(f"{there}_id", "kind"))
    rows = node_rows([i for i, _ in pairs], as_of)
    trusts = shown_trust(rows, as_of=as_of)  # sealed or rejected now: so in every past view
    alive = live_at(rows, as_of=as_of)
    items = []
    for i, kind in pairs:
        trust = trusts[i]
        title = short_title(rows[i]["head"], source=rows[i]["source"], node_id=i, trust=trust)
        items.append({"id": i, "kind": kind, "trust": trust, "title": title, "live": i in alive})
    return {"items": items, "total": total, "more": total - len(items)}


def hood_list(hood: Neighbourhood) -> list[tuple[GraphNode, list[GraphNode]]]:
    """The picture as a list (a narrow screen's view): each inner node with the outer nodes drawn
    beside it, in the picture's order."""
    inner = [g for g in hood.nodes.values() if g.ring == 1]
    return [
        (g, [k for k in hood.nodes.values() if k.ring == 2 and k.parent == g.id]) for g in inner
    ]
