"""A whole domain as one picture (Obsidian's graph view as the anchor): which nodes and links
it draws. The best-linked live nodes of one domain, filtered by trust and kind, with the links
among them (a relation may be hidden); placed by graph_layout.spread and drawn by the same code
as a node's neighbourhood. Live nodes only, as they stand now: browsing the picture is
inspection, never a read."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from dashboard.graph import Neighbourhood, graph_node, judge, node_rows
from memory.models import Edge, Node
from memory.trust import with_trust
from review.queue import drawn_as_supersedes

SIZES = (50, 150, 300)
HUB_SHARE = 10  # one node in ten is a hub the picture gathers the others around
NO_CENTRE = 0  # ids start at 1: a domain picture has no centre


@dataclass(frozen=True)
class Picked:
    hood: Neighbourhood
    matching: int  # live nodes that pass the filters; the picture draws the best-linked of them


def _links(field: str) -> Subquery:
    rows = Edge.objects.filter(**{field: OuterRef("pk")}).values(field)
    return Subquery(rows.annotate(n=Count("id")).values("n")[:1], output_field=IntegerField())


def _around(hubs: list[int], nodes: QuerySet[Node], size: int) -> list[int]:
    """The hubs, then what links to them (among the nodes that pass the filters), hub by hub, up
    to `size`: a picture of clusters, not of the best-linked nodes scattered apart from what
    links them (their neighbours are seldom best-linked themselves)."""
    chosen = dict.fromkeys(hubs)
    pairs = Edge.objects.filter(Q(from_node_id__in=hubs) | Q(to_node_id__in=hubs))
    by_hub: dict[int, list[int]] = {hub: [] for hub in hubs}
    for a, b in pairs.values_list("from_node_id", "to_node_id")[: size * 20]:
        for hub, other in ((a, b), (b, a)):
            if hub in by_hub and other not in by_hub:
                by_hub[hub].append(other)
    candidates = {other for others in by_hub.values() for other in others}
    allowed = set(nodes.filter(pk__in=candidates).values_list("pk", flat=True))
    for depth in range(size):
        added = False
        for hub in hubs:
            others = by_hub[hub]
            if depth < len(others):
                added = True
                if others[depth] in allowed and len(chosen) < size:
                    chosen.setdefault(others[depth])
        if not added or len(chosen) >= size:
            break
    return list(chosen)


def domain_picture(
    domain: str, *, trust: str = "", kind: str = "", hide: Collection[str] = (), size: int = 150
) -> Picked:
    nodes = Node.objects.filter(domain=domain, decayed_at__isnull=True)
    if kind:
        nodes = nodes.filter(kind=kind)
    if trust:
        nodes = with_trust(nodes).filter(trust=trust)
    degree = Coalesce(_links("from_node"), Value(0)) + Coalesce(_links("to_node"), Value(0))
    ranked = list(nodes.annotate(degree=degree).order_by("-degree", "-id").values_list("id")[:size])
    hubs = [i for (i,) in ranked[: max(1, size // HUB_SHARE)]]
    ids = _around(hubs, nodes, size) if hubs else []
    ids += [i for (i,) in ranked if i not in set(ids)][: size - len(ids)]
    hood = Neighbourhood(centre=NO_CENTRE)
    rows = node_rows(ids, None)
    big = set(hubs)
    for i in ids:
        hood.nodes[i] = graph_node(i, 1 if i in big else 2, rows[i], parent=None)
    judge(hood, None)
    among = Edge.objects.filter(from_node_id__in=ids, to_node_id__in=ids)
    drawn = drawn_as_supersedes(sorted(among.values_list("from_node_id", "to_node_id", "kind")))
    hood.edges = [edge for edge in drawn if edge[2] not in hide]  # after "supersedes" is named
    matching = nodes.count()
    hood.more[1] = matching - len(ids)
    return Picked(hood=hood, matching=matching)
