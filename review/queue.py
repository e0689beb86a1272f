"""What waits for the owner's decision: the proposed queue and the sealed list (read-only).

Derived from the audit log, never stored. Reads the store clock of events (Event.at) only, to
order the queue oldest proposal first. Nothing here writes; the acts live in review/ceremony.py.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from memory import inputs
from memory.batches import UNDONE_REASON
from memory.chunks import chunks
from memory.errors import GroveError
from memory.forgetting import PendingMarks, held_back, pending_decays
from memory.models import ApiToken, Event, EventKind, Node, Trust
from memory.trust import WORDLESS, trust_map
from review import ceremony
from review.near import Near, near_duplicates

NO_WORDS = WORDLESS  # never shown on a decision page


@dataclass(frozen=True)
class Item:
    """One node as a decision row: the node, its trust now, the proposal that queued it, and
    the owner's earlier declines of it (an agent's re-proposal shows that history)."""

    node: Node
    trust: str
    proposal: Event | None
    declines: tuple[Event, ...] = ()
    near: Near | None = None  # the node it is like (review/near.py), when the page asked

    @property
    def shows_words(self) -> bool:
        return self.trust not in NO_WORDS

    @property
    def root_refusal(self) -> GroveError | None:
        """ceremony.can_root for the templates: why this node cannot be rooted, or None."""
        return ceremony.can_root(self.node, self.trust)

    @property
    def supersede_refusal(self) -> GroveError | None:
        return ceremony.can_supersede(self.node, self.trust)

    @property
    def decline_refusal(self) -> GroveError | None:
        return ceremony.can_decline(self.node, self.trust)


@dataclass(frozen=True)
class QueueFilters:
    """The queue's filters, from the query string; blank means any."""

    agent: str = ""
    domain: str = ""
    kind: str = ""
    older_than_days: int = 0

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> QueueFilters:
        age = query.get("age") or ""
        days = max(0, min(int(age), 3650)) if inputs.ascii_digits(age) else 0
        return cls(
            agent=query.get("agent", "").strip(),
            domain=query.get("domain", "").strip(),
            kind=query.get("kind", "").strip(),
            older_than_days=days,
        )

    def as_query(self) -> dict[str, str]:
        pairs = {"agent": self.agent, "domain": self.domain, "kind": self.kind}
        pairs["age"] = str(self.older_than_days) if self.older_than_days else ""
        return {k: v for k, v in pairs.items() if v}


@dataclass
class Waiting:
    """Every proposed node, oldest latest-proposal first, and the facets to filter them by."""

    items: list[Item] = field(default_factory=list)
    agents: dict[str, int] = field(default_factory=dict)
    domains: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)
    # Proposals through a token the owner muted: out of the queue, counted per agent, back
    # in their place when it is unmuted.
    muted: dict[str, int] = field(default_factory=dict)
    aside: list[Item] = field(default_factory=list)

    def matching(self, filters: QueueFilters) -> list[Item]:
        cutoff = timezone.now() - timedelta(days=filters.older_than_days)
        return [
            item
            for item in self.items
            if item.proposal is not None
            and (not filters.agent or item.proposal.actor == filters.agent)
            and (not filters.domain or item.node.domain == filters.domain)
            and (not filters.kind or item.node.kind == filters.kind)
            and (not filters.older_than_days or item.proposal.at <= cutoff)
        ]


def waiting() -> Waiting:
    """Every node whose trust is proposed now, each with its latest proposal (proposer = actor,
    reason, detail) and its earlier declines, oldest latest-proposal first (Event.at, the store
    clock of events; the age filter reads the same clock against now). Sealed, rejected,
    ground, superseded and declined nodes never appear, even if once proposed."""
    # Start from the proposal events, not the nodes: a node table of 100k rows has a few
    # hundred proposals, and trust is derived for those alone.
    latest: dict[int, Event] = {}
    declines: dict[int, list[Event]] = {}
    kinds = [EventKind.PROPOSED, EventKind.DECLINED]
    events = Event.objects.filter(kind__in=kinds).defer("snapshot").order_by("at", "id")
    by_id: dict[int, Event] = {}
    for event in events:
        if event.node_id is None:  # a proposal always names its node
            continue
        if event.kind == EventKind.PROPOSED:
            by_id[event.pk] = event
            # An undone decline proposes again by the agent's proposal: the queue shows that.
            again = event.detail.get("proposal") if event.reason == UNDONE_REASON else None
            latest[event.node_id] = by_id.get(again, event) if isinstance(again, int) else event
        else:
            declines.setdefault(event.node_id, []).append(event)
    trust = trust_map(latest)
    ids = sorted((i for i in latest if trust[i] == Trust.PROPOSED), key=lambda i: (latest[i].at, i))
    muted_tokens = set(ApiToken.objects.filter(muted=True).values_list("pk", flat=True))
    # Only what the filters and facets read; with_bodies() loads the shown page whole.
    nodes = Node.objects.only("id", "domain", "kind").in_bulk(ids)
    result = Waiting()
    for i in ids:
        if i not in nodes:
            continue
        item = Item(nodes[i], Trust.PROPOSED.value, latest[i], tuple(declines.get(i, ())))
        if latest[i].token_id in muted_tokens:
            result.muted[latest[i].actor] = result.muted.get(latest[i].actor, 0) + 1
            result.aside.append(item)
            continue
        result.items.append(item)
        for facet, key in (
            (result.agents, latest[i].actor),
            (result.domains, item.node.domain),
            (result.kinds, item.node.kind),
        ):
            facet[key] = facet.get(key, 0) + 1
    return result


def with_bodies(items: list[Item]) -> list[Item]:
    """`items` with their whole nodes (waiting() loads only the fields its filters read)."""
    nodes = Node.objects.defer("metadata").in_bulk([item.node.pk for item in items])
    return [replace(item, node=nodes[item.node.pk]) for item in items if item.node.pk in nodes]


def with_near(items: list[Item], *, waiting_ids: list[int]) -> list[Item]:
    """`items` each with the node it is like, if any (review/near.py)."""
    near = near_duplicates([item.node.pk for item in items], waiting_ids=waiting_ids)
    return [replace(item, near=near.get(item.node.pk)) for item in items]


def proposed_queue(*, limit: int = 50) -> tuple[list[Item], int]:
    """The oldest `limit` proposed nodes and how many are waiting in all."""
    items = waiting().items
    return with_bodies(items[:limit]), len(items)


@dataclass(frozen=True)
class Position:
    """Where a node stands in the queue as filtered: 1-based `index` of `total`, and the one to
    go to after it (`following`: the next in order, wrapping round to the oldest; None when it
    is the only one)."""

    index: int
    total: int
    following: int | None


def position(
    node_id: int, filters: QueueFilters | None = None, *, queue: Waiting | None = None
) -> Position | None:
    """`node_id`'s place in the queue as `filters` match it, or None when it is not waiting
    there (decided, or outside the filter). `queue`: the page's own waiting(), if it has one."""
    queue = queue if queue is not None else waiting()
    ids = [item.node.pk for item in queue.matching(filters or QueueFilters())]
    if node_id not in ids:
        return None
    at = ids.index(node_id)
    rest = ids[at + 1 :] + ids[:at]  # skipped ones come round again at the end
    return Position(at + 1, len(ids), rest[0] if rest else None)


def next_waiting(*, after: int, filters: QueueFilters | None = None) -> int | None:
    """Where the owner goes once they have decided on `after`: the next proposed node after it
    in the queue as `filters` match it (wrapping round), or the oldest if `after` is not there.
    Ask before the act: once decided, `after` has left the queue and its place with it."""
    found = position(after, filters)
    if found is not None:
        return found.following
    ids = [item.node.pk for item in waiting().matching(filters or QueueFilters())]
    return next((i for i in ids if i != after), None)


def sealed_nodes(*, limit: int = 200) -> list[Item]:
    """Sealed nodes, newest id first, so the owner can unseal them; callers must show only the
    id. Only nodes with a seal event are considered."""
    ids = Event.objects.filter(kind=EventKind.SEALED).values_list("node_id", flat=True).distinct()
    trust = trust_map(set(ids))
    sealed = sorted((i for i, t in trust.items() if t == Trust.SEALED), reverse=True)[:limit]
    nodes = Node.objects.only("pk").in_bulk(sealed)
    return [
        Item(node=nodes[i], trust=Trust.SEALED.value, proposal=None) for i in sealed if i in nodes
    ]


def decision_item(node: Node) -> Item:
    """One node with its trust now, its latest proposal, if any, and its declines."""
    trust = trust_map([node.pk])[node.pk]
    declines = node.events.filter(kind=EventKind.DECLINED).order_by("at", "id")
    return Item(node, trust, _proposals([node.pk]).get(node.pk), tuple(declines))


def _proposals(node_ids: list[int]) -> dict[int, Event]:
    """The latest proposal event per node (the one that put it in the queue)."""
    found: dict[int, Event] = {}
    for chunk in chunks(node_ids):
        events = Event.objects.filter(node_id__in=chunk, kind=EventKind.PROPOSED).order_by(
            "at", "id"
        )
        for event in events:
            if event.node_id is not None:  # a proposal always names its node
                found[event.node_id] = event
    return found


def pending_decay_rows(
    *, within_days: float, limit: int = 500, marks: PendingMarks | None = None
) -> dict[str, list[dict[str, Any]]]:
    """memory.forgetting.pending_decays split for the page: {"now": [...], "soon": [...]}, each row
    with its trust and why nothing holds it; a rejected node's excerpt is dropped (its words are
    a tombstone). `marks`: the page's own (one read of the graph per request). Store clock only.
    Sealed, ground and proposed nodes never appear: they are roots."""
    rows = pending_decays(within_days=within_days, limit=limit, marks=marks)
    trust = trust_map([row["id"] for row in rows])
    split: dict[str, list[dict[str, Any]]] = {"now": [], "soon": []}
    for row in rows:
        row = {**row, "trust": trust[row["id"]]}
        if row["trust"] in NO_WORDS:
            row["excerpt"] = ""
        split["now" if row["eligible_now"] else "soon"].append(row)
    return split


def decided_row(node: Node, *, state: str, trust: str | None = None) -> dict[str, Any]:
    """A pending-decay row after the owner decided (state "kept" or "let go"); `trust` when the
    caller judged it already (a page of rows: one trust_map for all)."""
    trust = trust or trust_map([node.pk])[node.pk]
    return {
        "id": node.pk,
        "kind": node.kind,
        "domain": node.domain,
        "excerpt": "" if trust in NO_WORDS else node.body[:160],
        "trust": trust,
        "state": state,
    }


# Characters that change how text looks without being seen: every format character (Unicode
# Cf: zero-width and direction controls, the soft hyphen, the Tag block U+E0000-E007F) plus
# invisible letters and selectors outside Cf. The owner adopts exact words: they must know.
_INVISIBLE_NOT_CF = frozenset("\u034f\u115f\u1160\u3164\uffa0")


def _hidden(ch: str) -> bool:
    code = ord(ch)
    return (
        unicodedata.category(ch) == "Cf"
        or ch in _INVISIBLE_NOT_CF
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0xE0000 <= code <= 0xE01EF  # tags and supplementary variation selectors
    )


def hidden_marks(text: str) -> list[str]:
    """The invisible or direction-control characters in `text`, as sorted "U+XXXX" labels."""
    return sorted({f"U+{ord(ch):04X}" for ch in text if _hidden(ch)})


def replacement(node_id: int, *, as_of: datetime | None = None) -> Event | None:
    """The superseded event of `node_id` (related_node = its replacement), or None: what the
    "replaced by #N on <date>" banner shows. As of `as_of` (audit clock), only a supersession
    recorded by then: a past view never shows its future."""
    events = Event.objects.filter(node_id=node_id, kind=EventKind.SUPERSEDED)
    if as_of is not None:
        events = events.filter(at__lte=as_of)
    return events.select_related("related_node").first()


SUPERSEDES = "supersedes"  # the label the graph draws for a replacement's edge to the old node


def drawn_as_supersedes(edges: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """`edges` (from, to, kind) with each replacement's derived_from edge to the node it
    superseded relabelled "supersedes", so a picture shows the relation, not the mechanism
    (the stored edge stays derived_from: walks, decay and recall read it so)."""
    ids = {a for a, _, _ in edges}
    pairs = set(
        Event.objects.filter(kind=EventKind.SUPERSEDED, related_node_id__in=ids).values_list(
            "related_node_id", "node_id"
        )
    )
    return [
        (a, b, SUPERSEDES if kind == "derived_from" and (a, b) in pairs else kind)
        for a, b, kind in edges
    ]


def held_back_words() -> dict[str, Any] | None:
    """What sleep's guard held back (memory/forgetting.held_back) with the percentages the
    pages say it in: of the live graph, and the guard's own share."""
    held = held_back()
    if held is None:
        return None
    share = settings.GROVE_DECAY_GUARD_SHARE
    return {**held, "percent": round(held["share"] * 100), "guard_percent": round(share * 100)}
