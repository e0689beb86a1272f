"""What waits for the owner's decision: the proposed queue and the sealed list (read-only).

Derived from the audit log, never stored. Reads the store clock of events (Event.at) only, to
order the queue oldest proposal first. Nothing here writes; the acts live in review/ceremony.py.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from memory.models import Event, EventKind, Node, Trust
from memory.sleep.decay import pending_decays
from memory.trust import trust_map

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


def proposed_queue(*, limit: int = 50) -> tuple[list[Item], int]:
    """The oldest `limit` nodes whose trust is proposed, oldest proposal first (Event.at), each
    with its proposal event (proposer = actor, reason, detail), and how many are waiting in all.
    Sealed, rejected, ground and superseded nodes never appear, even if once proposed."""
    # Start from the proposal events, not the nodes: a node table of 100k rows has a handful
    # of proposals, and trust is derived for those alone.
    first: dict[int, Event] = {}
    for event in Event.objects.filter(kind=EventKind.PROPOSED).order_by("at", "id"):
        if event.node_id is not None:  # a proposal always names its node
            first.setdefault(event.node_id, event)
    trust = trust_map(first)
    waiting = [node_id for node_id in first if trust[node_id] == Trust.PROPOSED]
    nodes = Node.objects.in_bulk(waiting[:limit])
    items = [
        Item(node=nodes[i], trust=Trust.PROPOSED.value, proposal=first[i])
        for i in waiting[:limit]
        if i in nodes
    ]
    return items, len(waiting)


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
            if event.node_id is not None:  # a proposal always names its node
                found[event.node_id] = event
    return found


def pending_decay_rows(*, within_days: float, limit: int = 500) -> dict[str, list[dict]]:
    """memory.sleep.decay.pending_decays split for the page: {"now": [...], "soon": [...]}, each row
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
