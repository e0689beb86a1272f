"""What waits for the owner's decision: the proposed queue and the sealed list (read-only).

Derived from the audit log, never stored. Reads the store clock of events (Event.at) only, to
order the queue oldest proposal first. Nothing here writes; the acts live in review/ceremony.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import OuterRef, Subquery

from memory.decay import pending_decays
from memory.models import Event, EventKind, Node, Trust
from memory.trust import trust_map, with_trust

# Trust states whose words are never shown on a decision page (sealed hides everything,
# rejected is a tombstone).
NO_WORDS = frozenset({Trust.SEALED.value, Trust.REJECTED.value})


@dataclass(frozen=True)
class Item:
    """One node as a decision row: the node, its trust now, and the proposal that queued it."""

    node: Node
    trust: str
    proposal: Event | None

    @property
    def shows_words(self) -> bool:
        return self.trust not in NO_WORDS


def proposed_queue(*, limit: int = 200) -> list[Item]:
    """Nodes whose trust is proposed, oldest proposal first (Event.at), with the proposal event
    (proposer = actor, reason, detail). Sealed, rejected, ground and superseded nodes never
    appear, even if they were once proposed."""
    first_proposal = (
        Event.objects.filter(node=OuterRef("pk"), kind=EventKind.PROPOSED)
        .order_by("at", "id")
        .values("at")[:1]
    )
    nodes = list(
        with_trust(Node.objects.all())
        .filter(trust=Trust.PROPOSED.value)
        .annotate(proposed_at=Subquery(first_proposal))
        .order_by("proposed_at", "pk")[:limit]
    )
    proposals = _proposals([n.pk for n in nodes])
    return [Item(node=n, trust=n.trust, proposal=proposals.get(n.pk)) for n in nodes]


def sealed_nodes(*, limit: int = 200) -> list[Item]:
    """Sealed nodes, newest first, so the owner can unseal them; callers must show only the id."""
    nodes = list(
        with_trust(Node.objects.only("pk")).filter(trust=Trust.SEALED.value).order_by("-pk")[:limit]
    )
    return [Item(node=n, trust=n.trust, proposal=None) for n in nodes]


def decision_item(node: Node) -> Item:
    """One node with its trust now and its latest proposal, if any."""
    trust = trust_map([node.pk])[node.pk]
    return Item(node=node, trust=trust, proposal=_proposals([node.pk]).get(node.pk))


def _proposals(node_ids: list[int]) -> dict[int, Event]:
    """The latest proposal event per node (the one that put it in the queue)."""
    found: dict[int, Event] = {}
    for start in range(0, len(node_ids), 900):
        events = Event.objects.filter(
            node_id__in=node_ids[start : start + 900], kind=EventKind.PROPOSED
        ).order_by("at", "id")
        for event in events:
            found[event.node_id] = event
    return found


def pending_decay_rows(*, within_days: float, limit: int = 500) -> dict[str, list[dict]]:
    """memory.decay.pending_decays split for the page: {"now": [...], "soon": [...]}, each row
    with its trust; a rejected node's excerpt is dropped (its words are a tombstone). Store
    clock only (the gate's). Sealed, ground and proposed nodes never appear: the gate spares
    them."""
    rows = pending_decays(within_days=within_days, limit=limit)
    trust = trust_map([row["id"] for row in rows])
    split: dict[str, list[dict]] = {"now": [], "soon": []}
    for row in rows:
        row = {**row, "trust": trust[row["id"]]}
        if row["trust"] in NO_WORDS:
            row["excerpt"] = ""
        split["now" if row["eligible_now"] else "soon"].append(row)
    return split


def decided_row(node: Node, *, state: str) -> dict:
    """A pending-decay row after the owner decided (state "kept" or "let go")."""
    trust = trust_map([node.pk])[node.pk]
    return {
        "id": node.pk,
        "kind": node.kind,
        "domain": node.domain,
        "excerpt": "" if trust in NO_WORDS else node.body[:160],
        "trust": trust,
        "state": state,
    }


# Characters that change how text looks without being seen (direction overrides and isolates,
# zero-width characters): the owner adopts exact words, so they must know these are there.
_HIDDEN_MARKS = frozenset(
    "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2066\u2067\u2068\u2069\ufeff"
)


def hidden_marks(text: str) -> list[str]:
    """The invisible or direction-control characters in `text`, as sorted "U+XXXX" labels."""
    return sorted({f"U+{ord(ch):04X}" for ch in text if ch in _HIDDEN_MARKS})
