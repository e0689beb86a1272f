"""Why a node may be believed: its authority report (any node) and its walk back (ground).

Both give previews only, never a body. A sealed node's report is {"id", "trust": "sealed"} and
nothing else: no hash, no excerpt, no events. Nodes outside the caller's domains do not exist.

Decision: adopting words appear in walk_back (the adoption is what a walk back is for) but not
in authority_report, which agents read through the API next to recall: the owner's words of
adoption are theirs, and an event list (kind, time, actor, reason) already says who did what.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from memory.clocks import parse_instant
from memory.errors import Conflict, NotFound
from memory.models import CEREMONY_EVENT_KINDS, Edge, Event, EventKind, Node, Trust
from memory.trust import trust_map
from memory.visibility import HIDDEN_TRUST, Visibility, lawful, live_at, node_in_domains

PREVIEW_CHARS = 160


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def preview(node: Node, trust: str) -> dict[str, Any]:
    """A bounded preview of one node; a sealed one shows only its id and trust."""
    if trust == Trust.SEALED:
        return {"id": node.pk, "trust": trust}
    text = node.body if len(node.body) <= PREVIEW_CHARS else node.body[: PREVIEW_CHARS - 1] + "…"
    return {
        "jurisdiction": node.jurisdiction,
        "id": node.pk,
        "trust": trust,
        "kind": node.kind,
        "excerpt": "" if trust in HIDDEN_TRUST else text,
        "source": node.source,
        "live": node.is_live,
    }


def _origins(
    node: Node, domains: Iterable[str] | None, as_of: datetime | None
) -> list[dict[str, Any]]:
    """Previews of what the node came from (its outgoing edges). An agent (domains given) is
    shown only origins it may see (memory/visibility.py): never the id of a sealed, rejected or
    decayed node. The owner sees every origin, a sealed one as its id and trust alone."""
    edges = Edge.objects.filter(from_node=node).exclude(kind="similar").select_related("to_node")
    if as_of is not None:
        edges = edges.filter(created_at__lte=as_of)
    if domains is not None:
        edges = edges.filter(to_node__domain__in=list(domains))
    ordered = list(edges.order_by("id"))
    targets = [edge.to_node_id for edge in ordered]
    if domains is None:
        trusts = trust_map(targets, as_of=as_of)
    else:
        trusts = lawful(targets, Visibility.of(domains=domains, scope="both", as_of=as_of))
    return [
        {"relation": edge.kind, **preview(edge.to_node, trusts[edge.to_node_id])}
        for edge in ordered
        if edge.to_node_id in trusts
    ]


def authority_report(
    node_id: int, *, domains: Iterable[str] | None = None, as_of: str | datetime | None = None
) -> dict[str, Any]:
    """Trust, lifecycle flags, body hash, authority events and previews of origins, as the node
    stands now or stood at `as_of` (audit clock Event.at and store clock created_at).

    Never a body. Refuses (NotFound) unknown nodes, nodes outside `domains` and nodes not yet
    written at `as_of`; (Invalid) a naive as_of. A sealed node reports only its id and trust.
    """
    when = parse_instant(as_of, field="as_of")
    node = node_in_domains(node_id, domains=domains)
    if when is not None and node.created_at > when:
        raise NotFound(f"node {node_id} did not exist at {when.isoformat()}")
    trust = trust_map([node.pk], as_of=when)[node.pk]
    if trust == Trust.SEALED:
        return {"id": node.pk, "trust": trust}
    events = Event.objects.filter(node=node, kind__in=CEREMONY_EVENT_KINDS)
    if when is not None:
        events = events.filter(at__lte=when)
    at = node.permanent_at  # set on every permanent node (memory_node_permanent_has_time)
    permanent = node.permanent and (when is None or (at is not None and at <= when))
    return {
        **preview(node, trust),
        "domain": node.domain,
        "signature": node.signature,
        "body_hash": node.body_hash,
        "created_at": _iso(node.created_at),
        "referent_time": _iso(node.referent_time),
        "live": node.pk in live_at([node.pk], as_of=when),
        "decayed_at": _iso(node.decayed_at) if when is None else None,
        "permanent": permanent,
        "permanent_at": _iso(node.permanent_at) if permanent else None,
        "as_of": _iso(when),
        "events": [
            {
                "kind": event.kind,
                "at": _iso(event.at),
                "actor": event.actor,
                "reason": event.reason,
                "related_node": event.related_node_id,
            }
            for event in events.order_by("at", "id")
        ],
        "origins": _origins(node, domains, when),
    }


def walk_back(node_id: int, *, domains: Iterable[str] | None = None) -> dict[str, Any]:
    """Why a ground node is ground: its adoption (who, when, adopting words, the hash adopted),
    what it came from (previews) and, for a pair, its scroll pointer. Reads no clock.

    Refuses (NotFound) unknown, out-of-domain and sealed nodes; (Conflict) a node that is not
    ground (only ground has an adoption to walk back to).
    """
    node = node_in_domains(node_id, domains=domains)
    trust = trust_map([node.pk])[node.pk]
    if trust == Trust.SEALED:
        raise NotFound(f"node {node_id} not found")
    if trust != Trust.GROUND:
        raise Conflict(f"node {node.pk} is {trust}, not ground", code="not_ground")
    rooted = Event.objects.get(node=node, kind=EventKind.ROOTED)
    return {
        **preview(node, trust),
        "body_hash": node.body_hash,
        "adoption": {
            "actor": rooted.actor,
            "at": _iso(rooted.at),
            "adopting_words": rooted.detail.get("adopting_words", ""),
            "body_hash": rooted.detail.get("body_hash", ""),
            "supersedes": rooted.detail.get("supersedes"),
        },
        "origins": _origins(node, domains, None),
        "scroll": (
            {"path": node.scroll_path, "offset": node.scroll_offset, "hash": node.scroll_hash}
            if node.scroll_path
            else None
        ),
    }
