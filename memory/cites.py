"""Wild reads cite: a holder who reads a wild node owes it a cites edge from their next pair.

read() and the walk call pend_cite; scroll.commit_turn(holder=...) calls consume_cites inside
the pair's transaction, so the pair and its cites commit together.
"""

from __future__ import annotations

from django.db import transaction

from memory.errors import Invalid, NotFound
from memory.models import Edge, EdgeKind, Jurisdiction, Node, PendingCite


def pend_cite(*, holder: str, node_id: int) -> None:
    """Record that `holder` read wild node `node_id` (once per holder and node until consumed).

    Reads the store clock for created_at. Refuses (Invalid) a blank holder or a home node;
    (NotFound) an unknown node.
    """
    if not isinstance(holder, str) or not holder.strip():
        raise Invalid("a pending cite needs a holder", code="no_holder")
    jurisdiction = Node.objects.filter(pk=node_id).values_list("jurisdiction", flat=True).first()
    if jurisdiction is None:
        raise NotFound(f"node {node_id} not found")
    if jurisdiction != Jurisdiction.WILD:
        raise Invalid(f"node {node_id} is home: only wild reads are cited", code="not_wild")
    with transaction.atomic():
        # Inside BEGIN IMMEDIATE: the existence check and the insert cannot interleave.
        if not PendingCite.objects.filter(
            holder=holder, node_id=node_id, consumed_by__isnull=True
        ).exists():
            PendingCite.objects.create(holder=holder, node_id=node_id)


def open_cites(holder: str) -> list[int]:
    """Node ids the holder read and their next pair will cite, oldest first."""
    return list(
        PendingCite.objects.filter(holder=holder, consumed_by__isnull=True)
        .order_by("id")
        .values_list("node_id", flat=True)
    )


def consume_cites(*, holder: str, pair: Node) -> list[int]:
    """Give `pair` a cites edge to each of the holder's open pending cites and mark them
    consumed by it. Runs in the caller's transaction; returns the cited node ids."""
    if pair.kind != "pair":
        raise Invalid("only a pair consumes pending cites", code="not_a_pair")
    cited = []
    with transaction.atomic():
        for cite in PendingCite.objects.filter(holder=holder, consumed_by__isnull=True).order_by(
            "id"
        ):
            # Claim with a conditional update: a cite is consumed by exactly one pair.
            claimed = PendingCite.objects.filter(pk=cite.pk, consumed_by__isnull=True).update(
                consumed_by=pair
            )
            if not claimed or cite.node_id == pair.pk:
                continue
            Edge.objects.get_or_create(
                from_node=pair,
                to_node_id=cite.node_id,
                kind=EdgeKind.CITES,
                defaults={"created_by": holder},
            )
            cited.append(cite.node_id)
    return cited
