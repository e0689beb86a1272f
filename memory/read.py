"""Read: the full body of one node, which counts as an access (discovery by recall does not)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import Case, F, PositiveIntegerField, Q, When
from django.utils import timezone

from memory import audit
from memory.cites import pend_cite
from memory.errors import NotFound
from memory.models import ApiToken, EventKind, Jurisdiction, Node, Trust
from memory.trust import trust_map
from memory.visibility import HIDDEN_TRUST, MAX_ID, Visibility

_MISSING = "no node {id} here"


def visible_node(
    node_id: Any, *, vis: Visibility, include_superseded: bool = True
) -> tuple[Node, str]:
    """The node and its trust, if the caller may see it; else NotFound (never Forbidden).

    Outside the domains or scope, created after as_of, decayed (now, or as of as_of), sealed
    or rejected: all answer the same NotFound with the same message, so nothing leaks. Every
    id takes every step (the row, its life, its trust then and now) before any is judged, so a
    missing, a decayed and a sealed id cost the same queries in the same order: the time of a
    refusal says no more than its words.
    """
    try:
        node_id = int(node_id)
    except (TypeError, ValueError, OverflowError):
        raise NotFound(_MISSING.format(id=node_id)) from None
    pk = node_id if 0 < node_id <= MAX_ID else 0  # no row has id 0; the same queries run
    node = Node.objects.filter(pk=pk).first()
    live = vis.alive([pk])  # live now or at as_of; for a dig, decayed now
    then = trust_map([pk], as_of=vis.as_of)[pk]
    now = trust_map([pk])[pk] if vis.as_of is not None else then
    hidden = HIDDEN_TRUST if include_superseded else HIDDEN_TRUST | {Trust.SUPERSEDED.value}
    if (
        node is None
        or (vis.domains is not None and node.domain not in vis.domains)
        or (vis.scope != "both" and node.jurisdiction != vis.scope)
        or (vis.as_of is not None and node.created_at > vis.as_of)
        or pk not in live
        or now in HIDDEN_TRUST
        or then in hidden
    ):
        raise NotFound(_MISSING.format(id=node_id))
    return node, then


def access_fields(now: datetime, reader: str) -> dict[str, Any]:
    """The UPDATE that counts one read by `reader` at `now` (store clock): access_count +1,
    last_accessed_at, last_read_by, and read_days +1 only on a new UTC day, so a burst of reads
    on one day counts one day (the promotion threshold counts reading days). Used by read(); the
    owner's keep is not a read."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    new_day = Q(last_accessed_at__isnull=True) | Q(last_accessed_at__lt=day)
    return {
        "access_count": F("access_count") + 1,
        "read_days": Case(
            When(new_day, then=F("read_days") + 1),
            default=F("read_days"),
            output_field=PositiveIntegerField(),
        ),
        "last_accessed_at": now,
        "last_read_by": reader[:200],
    }


def read(
    node_id: int,
    *,
    domains: Iterable[str] | None = None,
    actor: str = "owner",
    as_of: str | datetime | None = None,
    holder: str | None = None,
    token: ApiToken | None = None,
) -> dict[str, Any]:
    """The node's full body and its four axes; access_count +1 and last_accessed_at = now, in
    one UPDATE (so two concurrent reads both count).

    `actor` names the reader (the API passes its token's name). Reads the store clock (now,
    for last_accessed_at). With as_of, the node must have existed
    and been live at T, and trust is reported as of T; the access is still counted now.
    Refuses with NotFound a node that is missing, outside `domains`, decayed, sealed or
    rejected. When the node is wild and a `holder` reads it (an agent through the API or a
    walk), a cite is pended for the holder's next pair (DESIGN.md, walk), in the same
    transaction as the access. The owner browsing the dashboard holds no conversation: no cite.
    A read through an agent `token` is also a `read` event in the same transaction, so the
    owner sees what each agent read (the owner's own page views are not recorded as reads).
    """
    vis = Visibility.of(domains=domains, scope="both", as_of=as_of)
    node, trust = visible_node(node_id, vis=vis)
    now = timezone.now()
    with transaction.atomic():
        # Guarded by decayed_at: a decay committed between the check and here wins.
        counted = Node.objects.filter(pk=node.pk, decayed_at__isnull=True).update(
            **access_fields(now, actor)
        )
        if not counted:
            raise NotFound(_MISSING.format(id=node.pk))
        if holder and node.jurisdiction == Jurisdiction.WILD:
            pend_cite(holder=holder, node_id=node.pk)
        if token is not None:
            audit.record(EventKind.READ, node=node.pk, actor=actor, at=now, token=token)
    node.refresh_from_db(fields=["access_count", "last_accessed_at"])
    return {
        "jurisdiction": node.jurisdiction,
        "id": node.pk,
        "trust": trust,
        "kind": node.kind,
        "body": node.body,
        "body_hash": node.body_hash,
        "source": node.source,
        "domain": node.domain,
        "signature": node.signature,
        "metadata": node.metadata,
        "created_at": node.created_at.isoformat(),
        "referent_time": node.referent_time.isoformat() if node.referent_time else None,
        "event_time": node.event_time.isoformat(),
        "access_count": node.access_count,
        "last_accessed_at": node.last_accessed_at.isoformat() if node.last_accessed_at else None,
        "permanent": node.permanent,
        "live": True,
    }
