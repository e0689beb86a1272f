"""Trust is derived from authority events, never stored (DESIGN.md, the four axes).

Precedence: sealed (the latest seal/unseal is a seal) > rejected > superseded > ground (rooted)
> proposed (the latest propose/decline is a proposal) > unreviewed. Sealing hides without
erasing: unseal restores what trust was before. Declining a proposal makes the node unreviewed
again, so an agent may propose it again; the history stays in the log.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

from django.db.models import (
    Case,
    CharField,
    Exists,
    Max,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
    When,
)

from memory.chunks import chunks
from memory.models import CEREMONY_EVENT_KINDS, Event, EventKind, Node, Trust

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class Trusted(TypedDict):
    """What with_trust annotates each node with."""

    trust: str


# Trust states whose words are shown nowhere and matched by nothing, not even as a yes/no
# (sealed hides everything; rejected is a tombstone).
WORDLESS = frozenset({Trust.SEALED.value, Trust.REJECTED.value})

_PRECEDENCE = (
    (EventKind.REJECTED, Trust.REJECTED),
    (EventKind.SUPERSEDED, Trust.SUPERSEDED),
    (EventKind.ROOTED, Trust.GROUND),
)
# Pairs where the later event wins: (on, off, trust while on).
_TOGGLES = (
    (EventKind.SEALED, EventKind.UNSEALED),
    (EventKind.PROPOSED, EventKind.DECLINED),
)


def trust_from(latest: dict[str, tuple[datetime, int]]) -> str:
    """Trust from each ceremony kind's latest (at, id) on one node: the one rule, shared by
    trust_map and by callers that group the log themselves (the overview's counts)."""

    def on(kind: str, off: str) -> bool:
        return kind in latest and (off not in latest or latest[kind] > latest[off])

    if on(EventKind.SEALED, EventKind.UNSEALED):
        return Trust.SEALED.value
    for kind, trust in _PRECEDENCE:
        if kind in latest:
            return trust.value
    if on(EventKind.PROPOSED, EventKind.DECLINED):
        return Trust.PROPOSED.value
    return Trust.UNREVIEWED.value


def _events(kinds: Collection[str], as_of: datetime | None) -> QuerySet[Event]:
    qs = Event.objects.filter(node=OuterRef("pk"), kind__in=kinds)
    if as_of is not None:
        qs = qs.filter(at__lte=as_of)
    return qs


def with_trust(
    qs: QuerySet[Node] | None = None, *, as_of: datetime | None = None
) -> QuerySet[WithAnnotations[Node, Trusted]]:
    """Annotate each node with `trust`, as it stands now or as it stood at `as_of` (event clock
    of the audit log, Event.at)."""
    qs = Node.objects.all() if qs is None else qs

    def last(on: str, off: str) -> Subquery:
        return Subquery(_events([on, off], as_of).order_by("-at", "-id").values("kind")[:1])

    whens = [When(_sealed=EventKind.SEALED.value, then=Value(Trust.SEALED.value))]
    whens += [
        When(Exists(_events([kind], as_of)), then=Value(trust.value)) for kind, trust in _PRECEDENCE
    ]
    whens += [When(_proposed=EventKind.PROPOSED.value, then=Value(Trust.PROPOSED.value))]
    return qs.annotate(_sealed=last(*_TOGGLES[0]), _proposed=last(*_TOGGLES[1])).annotate(
        trust=Case(*whens, default=Value(Trust.UNREVIEWED.value), output_field=CharField())
    )


def trust_map(node_ids: Iterable[int], *, as_of: datetime | None = None) -> dict[int, str]:
    """Trust for many nodes in one query over their authority events (for packets and pages)."""
    ids = list(node_ids)
    result = dict.fromkeys(ids, Trust.UNREVIEWED.value)
    if not ids:
        return result
    seen: dict[int, dict[str, tuple[datetime, int]]] = {}
    for chunk in chunks(ids):
        qs = Event.objects.filter(node_id__in=chunk, kind__in=CEREMONY_EVENT_KINDS)
        if as_of is not None:
            qs = qs.filter(at__lte=as_of)
        rows = qs.order_by("at", "id").values_list("node_id", "kind", "at", "id")
        for node_id, kind, at, event_id in rows:
            seen.setdefault(node_id, {})[kind] = (at, event_id)
    for node_id, latest in seen.items():
        result[node_id] = trust_from(latest)
    return result


def trust_beneath_seal(node_ids: Iterable[int]) -> dict[int, str]:
    """Trust as each node would have it with any seal lifted (what unseal would give back): a
    sealed node keeps what the acts ask of its trust, ground's second confirmation first."""
    ids = list(node_ids)
    result = dict.fromkeys(ids, Trust.UNREVIEWED.value)
    seen: dict[int, dict[str, tuple[datetime, int]]] = {}
    kinds = [k for k in CEREMONY_EVENT_KINDS if k not in (EventKind.SEALED, EventKind.UNSEALED)]
    for chunk in chunks(ids):
        rows = Event.objects.filter(node_id__in=chunk, kind__in=kinds)
        for node_id, kind, at, event_id in rows.order_by("at", "id").values_list(
            "node_id", "kind", "at", "id"
        ):
            seen.setdefault(node_id, {})[kind] = (at, event_id)
    for node_id, latest in seen.items():
        result[node_id] = trust_from(latest)
    return result


def trust_counts(*, total: int | None = None) -> dict[str, int]:
    """Nodes per trust state, now (audit clock). One grouped pass over the authority events, the
    latest (at, id) per node and kind, so a 100k-node memory costs its few authority events, not
    a subquery per node; every node without one is unreviewed. `total` saves a count if known."""
    latest: dict[int, dict[str, tuple[datetime, int]]] = {}
    rows = (
        Event.objects.filter(kind__in=CEREMONY_EVENT_KINDS, node__isnull=False)
        .values("node_id", "kind")
        .annotate(last_at=Max("at"), last_id=Max("id"))
        .order_by()
    )
    for row in rows:
        latest.setdefault(row["node_id"], {})[row["kind"]] = (row["last_at"], row["last_id"])
    counts = {t.value: 0 for t in Trust}
    for kinds in latest.values():
        counts[trust_from(kinds)] += 1
    total = Node.objects.count() if total is None else total
    counts[Trust.UNREVIEWED.value] += total - len(latest)
    return counts


def trust_of(node_id: int, *, as_of: datetime | None = None) -> str:
    return trust_map([node_id], as_of=as_of)[node_id]
