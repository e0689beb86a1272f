""" "Why is this true?": a ground node's adoption (the owner's words, who, when, the hash
adopted), who proposed it, the provenance chain back through its origins, and, for a pair, its
scroll pointer. Thin: memory.authority.walk_back and authority_report hold the rules (previews
only; sealed and rejected origins show no words). Reading it counts no read.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memory.authority import authority_report, walk_back
from memory.errors import GroveError
from memory.models import EventKind, Trust
from review.queue import decision_item, replacement
from review.versions import history
from review.view_helpers import get_node_or_404
from web.htmx import HtmxHttpRequest

CHAIN_DEPTH = 4  # generations of origins shown
CHAIN_NODES = 40  # at most this many origins in all, so a hub cannot flood the page


def provenance(origins: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The origins, each with its own origins below it (breadth-first, bounded, each node once)."""
    seen: set[int] = set()
    budget = [CHAIN_NODES]

    def grow(level: list[dict[str, Any]], depth: int) -> list[dict[str, Any]]:
        rows = []
        for origin in level:
            if origin["id"] in seen or budget[0] <= 0:
                continue
            seen.add(origin["id"])
            budget[0] -= 1
            rows.append({**origin, "children": []})
        if depth < CHAIN_DEPTH:
            for row in rows:
                if row["trust"] == "sealed":
                    continue
                try:
                    parents = authority_report(row["id"]).get("origins", [])
                except GroveError:
                    parents = []
                row["children"] = grow(parents, depth + 1)
        return rows

    return grow(origins, 1)


@require_GET
def why_true(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    node = get_node_or_404(node_id)
    item = decision_item(node)
    if item.trust == Trust.SUPERSEDED:
        # Not an error for a page: it was true once, and the page says what replaced it and when.
        context: dict[str, Any] = {
            "item": item,
            "replaced": replacement(node.pk),
            "history": history(node),
            "adoption": node.events.filter(kind=EventKind.ROOTED).first(),
        }
        return render(request, "review/why.html", context)
    try:
        walk = walk_back(node.pk)
    except GroveError as refused:
        context = {"item": item, "refused": refused.message, "replaced": replacement(node.pk)}
        return render(request, "review/why.html", context, status=refused.status)
    context = {
        "item": item,
        "walk": walk,
        "chain": provenance(walk["origins"]),
        "hash_matches": walk["adoption"]["body_hash"] == walk["body_hash"],
    }
    return render(request, "review/why.html", context)
