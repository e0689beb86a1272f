"""Browsing every node the owner holds: facets, sort and pages, fast at 100k nodes.

Each facet narrows through an index: kind and domain (memory_node_kind_domain, _domain_live),
lifecycle (decayed_at), permanence through its audit events (promoted_permanent, one-way), and
trust through the audit log's few authority events (trust is derived, never stored: the nodes
with any authority event are a small set, judged once per page by memory.trust.trust_map;
"unreviewed" is every node outside that set). Pages are fetched one row past their end instead
of counted, so no page pays for a count over the whole table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.db.models.functions import Substr

from dashboard.labels import plain_text, short_title
from memory import inputs
from memory.errors import Invalid
from memory.models import (
    CEREMONY_EVENT_KINDS,
    Edge,
    Event,
    EventKind,
    Jurisdiction,
    Kind,
    Node,
    Trust,
)
from memory.packets import EXCERPT_CHARS, excerpt_of
from memory.recall.dig import ForgottenFilter, forgotten_nodes
from memory.trust import trust_map
from memory.visibility import HIDDEN_TRUST

PER_PAGE = 50
FACETS = ("trust", "lifecycle", "kind", "jurisdiction", "domain", "permanent", "links_to", "near")
LIFECYCLES = ("live", "decayed")
# Store order is arrival order (ids follow the store clock), and every index ends in the rowid:
# a facet's index walks in id order with no sort. Most read walks the partial index of live nodes
# that were read; the event clock has its own index.
SORTS = {
    "newest": ("-id",),
    "oldest": ("id",),
    "most-read": ("-access_count", "-id"),
    # Nodes with no known event time last, said explicitly: PostgreSQL would put NULLs first.
    "event-clock": (F("referent_time").desc(nulls_last=True), "-id"),
}
SORT_LABELS = {
    "newest": "newest first",
    "oldest": "oldest first",
    "most-read": "most read (live, read at least once)",
    "event-clock": "event clock (when known), latest first",
}


@dataclass
class Page:
    rows: list[dict[str, Any]]
    number: int
    has_next: bool
    filters: dict[str, str] = field(default_factory=dict)
    sort: str = "newest"

    @property
    def has_previous(self) -> bool:
        return self.number > 1


def _choice(params: Mapping[str, str], name: str, allowed: tuple[str, ...] | list[str]) -> str:
    value = (params.get(name) or "").strip()
    if value and value not in allowed:
        raise Invalid(f"{name} {value!r} is not one of: {', '.join(allowed)}")
    return value


def _judged(trust: str) -> list[int]:
    """The nodes whose trust is `trust` now, among those with any authority event."""
    judged = Event.objects.filter(kind__in=CEREMONY_EVENT_KINDS, node_id__isnull=False)
    ids: list[int] = list(judged.values_list("node_id", flat=True).distinct())
    return [i for i, t in trust_map(ids).items() if t == trust]


def _node_id(params: Mapping[str, str], name: str) -> int | None:
    value = (params.get(name) or "").strip().lstrip("#")
    if not value:
        return None
    if (node_id := inputs.typed_node_id(value)) is None:
        raise Invalid(f"{name} {value!r} is not a node id")
    return node_id


def filter_nodes(params: Mapping[str, str]) -> tuple[QuerySet[Node], dict[str, str], str]:
    """Nodes narrowed by the facets in `params`, ordered by `sort`; with the cleaned filters.

    Refuses (Invalid) a value outside a facet's choices, an unknown sort, a bad node id."""
    trust = _choice(params, "trust", Trust.values)
    lifecycle = _choice(params, "lifecycle", LIFECYCLES)
    kind = _choice(params, "kind", Kind.values)
    jurisdiction = _choice(params, "jurisdiction", Jurisdiction.values)
    permanent = _choice(params, "permanent", ("yes", "no"))
    sort = _choice(params, "sort", tuple(SORTS)) or "newest"
    domain = (params.get("domain") or "").strip()
    links_to = _node_id(params, "links_to")
    near = _node_id(params, "near")
    qs = Node.objects.all()
    if trust == Trust.UNREVIEWED:
        authority = Event.objects.filter(node=OuterRef("pk"), kind__in=CEREMONY_EVENT_KINDS)
        # A node sealed then unsealed has authority events and is unreviewed again.
        qs = qs.filter(~Exists(authority) | Q(pk__in=_judged(trust)))
    elif trust:
        qs = qs.filter(pk__in=_judged(trust))
    if lifecycle:
        qs = qs.filter(decayed_at__isnull=lifecycle == "live")
    if kind:
        qs = qs.filter(kind=kind)
    if domain:
        qs = qs.filter(domain=domain)
    if jurisdiction:
        qs = qs.filter(jurisdiction=jurisdiction)
    if permanent:
        # Permanence is one-way and every promotion is audited: the events name the few.
        promoted = Event.objects.filter(kind=EventKind.PROMOTED_PERMANENT).values("node_id")
        qs = qs.filter(pk__in=promoted) if permanent == "yes" else qs.exclude(pk__in=promoted)
    if links_to is not None:
        # Driven from the edge index (to_node, kind): a hub's few hundred, not every node.
        qs = qs.filter(pk__in=Edge.objects.filter(to_node=links_to).values("from_node"))
    if near is not None:  # an edge either way: what the graph calls a neighbour
        into = Edge.objects.filter(to_node=near).values("from_node")
        out = Edge.objects.filter(from_node=near).values("to_node")
        qs = qs.filter(Q(pk__in=into) | Q(pk__in=out))
    if sort == "most-read":
        # Nodes never read have nothing to rank; live ones walk memory_node_read_live.
        qs = qs.filter(access_count__gt=0)
        if lifecycle != "decayed":
            qs = qs.filter(decayed_at__isnull=True)
    filters = {
        "trust": trust,
        "lifecycle": lifecycle,
        "kind": kind,
        "jurisdiction": jurisdiction,
        "domain": domain,
        "permanent": permanent,
        "links_to": str(links_to or ""),
        "near": str(near or ""),
    }
    return qs.order_by(*SORTS[sort]), filters, sort


def page_number(value: str | None) -> int:
    return max(1, min(int(value), 100_000)) if value and inputs.ascii_digits(value) else 1


def rows_of(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """List rows: trust now, a short title and an excerpt; no words for sealed or rejected."""
    trusts = trust_map([n["id"] for n in nodes])
    rows = []
    for n in nodes:
        trust = trusts[n["id"]]
        hidden = trust in HIDDEN_TRUST
        title = short_title(n["head"], source=n["source"], node_id=n["id"], trust=trust)
        excerpt = "" if hidden else excerpt_of(plain_text(n["head"]), more=bool(n["after"]))
        if excerpt.startswith(title.removesuffix("…")):
            title, excerpt = excerpt, ""  # the title was only the first words: say them once
        rows.append(
            {
                **n,
                "trust": trust,
                "hidden": hidden,
                "title": title,
                "excerpt": excerpt,
                "live": n["decayed_at"] is None,
            }
        )
    return rows


ROW_FIELDS = (
    "id", "kind", "jurisdiction", "domain", "source", "created_at", "referent_time",
    "access_count", "last_accessed_at", "permanent", "decayed_at",
)  # fmt: skip


def row_values(qs: QuerySet[Node]) -> QuerySet[Node, dict[str, Any]]:
    """What rows_of reads of each node: ROW_FIELDS, the body's head (EXCERPT_CHARS + 1
    characters) and the character after it, which says the body goes on (the excerpt is cut
    even when its folded spaces fit)."""
    rows: QuerySet[Node, dict[str, Any]] = qs.annotate(
        head=Substr("body", 1, EXCERPT_CHARS + 1), after=Substr("body", EXCERPT_CHARS + 2, 1)
    ).values(*ROW_FIELDS, "head", "after")
    return rows


def browse(params: Mapping[str, str]) -> Page:
    """One page of nodes for the browse view (see filter_nodes for what it refuses)."""
    qs, filters, sort = filter_nodes(params)
    number = page_number(params.get("page"))
    start = (number - 1) * PER_PAGE
    found = list(row_values(qs)[start : start + PER_PAGE + 1])
    return Page(
        rows=rows_of(found[:PER_PAGE]),
        number=number,
        has_next=len(found) > PER_PAGE,
        filters=filters,
        sort=sort,
    )


def decay_events(node_ids: list[int]) -> dict[int, dict[str, Any]]:
    """The latest decayed event of each node (why, by whom and when it was forgotten)."""
    latest: dict[int, dict[str, Any]] = {}
    # Sorted here, not by the query: ORDER BY at made the planner walk (kind, at) through
    # every decayed event (70,000 at 100k) instead of seeking (node, kind) for these few.
    events = Event.objects.filter(node_id__in=node_ids, kind=EventKind.DECAYED)
    found = list(events.order_by().values("node_id", "reason", "actor", "at", "id"))
    for event in sorted(found, key=lambda e: (e["at"], e["id"])):
        latest[event["node_id"]] = {k: v for k, v in event.items() if k != "id"}
    return latest


def forgotten(params: Mapping[str, str]) -> Page:
    """One page of decayed nodes, most recently forgotten first, each with its decay event,
    narrowed by the filters of memory.recall.dig.ForgottenFilter (words, reason, domain, kind,
    author, origin, since, until). Refuses (Invalid) a day that is not YYYY-MM-DD."""
    chosen = ForgottenFilter.of(params)
    qs = forgotten_nodes(chosen)
    number = page_number(params.get("page"))
    start = (number - 1) * PER_PAGE
    found = list(row_values(qs.order_by("-decayed_at", "-id"))[start : start + PER_PAGE + 1])
    rows = rows_of(found[:PER_PAGE])
    events = decay_events([r["id"] for r in rows])
    for row in rows:
        row["event"] = events.get(row["id"])
        row["age_days"] = _days(row["decayed_at"], row["created_at"])
    return Page(rows=rows, number=number, has_next=len(found) > PER_PAGE, filters=chosen.values())


def _days(later: datetime | None, earlier: datetime | None) -> int | None:
    if later is None or earlier is None:
        return None
    return max(0, (later - earlier).days)
