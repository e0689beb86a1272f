"""The walk: move through the graph one lawful neighbour at a time, on durable tickets.

A ticket is an opaque random token; only its sha256 is stored (Ticket.token_hash). It is bound
to its holder, expires after GROVE_TICKET_SECONDS (store clock), and is single-use: step()
spends it and mints a child. around() discloses the routes from where the ticket stands and
records them on the ticket; step() may take only a disclosed route.

Routes:
- out: an edge from this node (edge_kind is its kind), target = the edge's other end;
- in: an edge to this node, target = the edge's source;
- deeper / shallower: a nests edge (container -> part) taken forward to a verbatim extract of
  this node, or back to the node this one was extracted from (memory/extract.py);
- next / prev: the neighbouring node of the same thread, by store clock (created_at, then id).
  A thread is the scroll for pairs (same scroll_path) and otherwise the node's first origin:
  the siblings derived_from the same parent (the turns of one imported session, the notes
  of one file). prev/next skip siblings the walker may not see.
Lawful neighbours only: visible in the ticket's domains and scope, live (at as_of, if set),
created by as_of, edges created by as_of, trust neither sealed nor rejected (superseded is
shown, labelled). Hubs show at most MAX_ROUTES edges each way, oldest first.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memory.errors import Forbidden, Invalid
from memory.models import ApiToken, Edge, EdgeKind, Node, Ticket
from memory.packets import packet, preview_rows
from memory.read import read, visible_node
from memory.visibility import Visibility, db_time, first_by_id, lawful

DIRECTIONS = ("in", "out", "next", "prev", "deeper", "shallower")
# nests edges are routes down into a node's extracts and back up: named, not plain in/out.
_NESTED = {"out": "deeper", "in": "shallower"}
MAX_ROUTES = 50
ALL_DOMAINS = "*"
_SIBLING_PROBE = 20


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _mint(*, node_id: int, holder: str, vis: Visibility, parent: Ticket | None) -> str:
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    Ticket.objects.create(
        token_hash=_hash(token),
        holder=holder,
        node_id=node_id,
        domains=list(vis.domains) if vis.domains is not None else [ALL_DOMAINS],
        scope=vis.scope,
        as_of=vis.as_of,
        parent=parent,
        created_at=now,
        expires_at=now + timedelta(seconds=settings.GROVE_TICKET_SECONDS),
    )
    return token


def _visibility(ticket: Ticket) -> Visibility:
    domains = None if ticket.domains == [ALL_DOMAINS] else ticket.domains
    return Visibility.of(domains=domains, scope=ticket.scope, as_of=ticket.as_of)


def _holder(holder: Any) -> str:
    if not isinstance(holder, str) or not holder.strip():
        raise Invalid("a walk needs a holder", code="no_holder")
    return holder


def _redeem(token: Any, *, holder: str) -> Ticket:
    """The ticket behind a token, refused (Forbidden, each with its own code) when forged,
    held by someone else, spent or expired. Reads the store clock for expiry."""
    holder = _holder(holder)
    if not isinstance(token, str) or not token:
        raise Forbidden("this is not a walk ticket", code="ticket_forged")
    ticket = Ticket.objects.filter(token_hash=_hash(token)).first()
    if ticket is None:
        raise Forbidden("this is not a walk ticket", code="ticket_forged")
    # Holder before state: someone else's ticket tells them nothing about where it stands.
    if not secrets.compare_digest(ticket.holder, holder):
        raise Forbidden("this ticket belongs to another holder", code="ticket_holder_mismatch")
    if ticket.spent_at is not None:
        raise Forbidden("this ticket was already used for a step", code="ticket_spent")
    if ticket.expires_at <= timezone.now():
        raise Forbidden("this ticket has expired; open a new walk", code="ticket_expired")
    return ticket


def open_walk(
    node_id: int,
    *,
    holder: str,
    domains: Iterable[str] | None = None,
    as_of: str | datetime | None = None,
    scope: str = "both",
) -> str:
    """Start a walk at a node the holder may see; returns the opaque ticket.

    Reads the store clock (expiry). Refuses NotFound for a node outside domains/scope, decayed,
    sealed or rejected (as of as_of when given); Invalid for a bad scope, as_of or holder.
    Opening is not reading: access_count is unchanged.
    """
    holder = _holder(holder)
    vis = Visibility.of(domains=domains, scope=scope, as_of=as_of)
    node, _ = visible_node(node_id, vis=vis)
    with transaction.atomic():
        return _mint(node_id=node.pk, holder=holder, vis=vis, parent=None)


def _edge_routes(node_id: int, vis: Visibility) -> list[tuple[str, str, int]]:
    edges = Edge.objects.filter(from_node_id=node_id)
    incoming = Edge.objects.filter(to_node_id=node_id)
    if vis.as_of is not None:
        edges = edges.filter(created_at__lte=vis.as_of)
        incoming = incoming.filter(created_at__lte=vis.as_of)
    routes = [
        ("out", kind, target)
        for kind, target in edges.order_by("id").values_list("kind", "to_node_id")[:MAX_ROUTES]
    ]
    first_in = first_by_id(incoming, MAX_ROUTES)  # a hub has thousands
    routes += [
        ("in", kind, source) for kind, source in first_in.values_list("kind", "from_node_id")
    ]
    return [(_NESTED[d] if k == EdgeKind.NESTS else d, k, t) for d, k, t in routes]


def _thread_siblings(node: Node, vis: Visibility) -> list[tuple[str, int]]:
    """Candidate prev/next ids (nearest first, a few each way), before lawfulness."""
    thread_params: list[Any]
    if node.scroll_path:
        thread_sql, thread_params = "s.scroll_path = %s", [node.scroll_path]
    else:
        parent = (
            Edge.objects.filter(from_node_id=node.pk, kind=EdgeKind.DERIVED_FROM)
            .order_by("to_node_id")
            .values_list("to_node_id", flat=True)
            .first()
        )
        if parent is None:
            return []
        thread_sql = (
            "s.id IN (SELECT from_node_id FROM memory_edge WHERE to_node_id = %s AND kind = %s)"
        )
        thread_params = [parent, EdgeKind.DERIVED_FROM.value]
    where, params = vis.sql("s")
    created = db_time(node.created_at)
    found: list[tuple[str, int]] = []
    # Raw: keyset paging (created_at, id) filtered by the visibility SQL twin that recall shares.
    with connection.cursor() as cursor:
        for direction, compare, order in (
            ("prev", "(s.created_at < %s OR (s.created_at = %s AND s.id < %s))", "DESC"),
            ("next", "(s.created_at > %s OR (s.created_at = %s AND s.id > %s))", "ASC"),
        ):
            cursor.execute(
                f"SELECT s.id FROM memory_node s WHERE {thread_sql} AND {compare} AND {where} "
                f"ORDER BY s.created_at {order}, s.id {order} LIMIT %s",
                [*thread_params, created, created, node.pk, *params, _SIBLING_PROBE],
            )
            found += [(direction, row[0]) for row in cursor.fetchall()]
    return found


def _lawful(ids: Iterable[int], vis: Visibility) -> dict[int, str]:
    """id -> trust for the ids the ticket's walker may see (memory/visibility.py decides)."""
    return lawful(ids, vis)


def routes_from(node: Node, vis: Visibility) -> list[dict[str, Any]]:
    """The lawful routes out of `node` under `vis`, each with a preview of its target."""
    edge_routes = _edge_routes(node.pk, vis)
    siblings = _thread_siblings(node, vis)
    trusts = _lawful([t for _, _, t in edge_routes] + [t for _, t in siblings], vis)
    rows = preview_rows(list(trusts))
    routes = [
        {
            "direction": d,
            "edge_kind": kind,
            "target": t,
            "preview": packet(rows[t], trust=trusts[t]),
        }
        for d, kind, t in edge_routes
        if t in trusts
    ]
    for direction in ("prev", "next"):
        # The nearest sibling the walker may see; hidden ones are stepped over, not shown.
        nearest = next((t for d, t in siblings if d == direction and t in trusts), None)
        if nearest is not None:
            routes.append(
                {
                    "direction": direction,
                    "edge_kind": None,
                    "target": nearest,
                    "preview": packet(rows[nearest], trust=trusts[nearest]),
                }
            )
    return routes


def around(token: str, *, holder: str) -> dict[str, Any]:
    """Where the ticket stands and its lawful routes; records the routes as disclosed.

    Does not spend the ticket and does not count as reading. Reads the store clock (expiry)
    and, with the ticket's as_of, the audit log's clock. Refuses what _redeem refuses, and
    NotFound when the node stood on is no longer visible (decayed or sealed since).
    """
    ticket = _redeem(token, holder=holder)
    vis = _visibility(ticket)
    node, trust = visible_node(ticket.node_id, vis=vis)
    routes = routes_from(node, vis)
    disclosed = {tuple(r) for r in ticket.disclosed}
    disclosed |= {(r["direction"], r["target"]) for r in routes}
    with transaction.atomic():
        Ticket.objects.filter(pk=ticket.pk).update(disclosed=sorted([d, t] for d, t in disclosed))
    here = packet(preview_rows([node.pk])[node.pk], trust=trust)
    return {"ticket": token, "node": here, "routes": routes}


def step(token: str, *, holder: str, direction: str, target: int) -> str:
    """Take a disclosed route: spends this ticket and returns a new one standing at `target`.

    Reads the store clock (expiry, spent_at). Refuses Invalid for an unknown direction;
    Forbidden for a forged, mismatched, spent or expired ticket and for a route around() did not
    disclose (code route_undisclosed); NotFound when the target is no longer visible.
    """
    if direction not in DIRECTIONS:
        raise Invalid(
            f"unknown direction {direction!r}; expected one of: {', '.join(DIRECTIONS)}",
            code="bad_direction",
        )
    ticket = _redeem(token, holder=holder)
    try:
        target = int(target)
    except (TypeError, ValueError):
        raise Invalid(f"target {target!r} is not a node id", code="bad_target") from None
    if [direction, target] not in [list(r) for r in ticket.disclosed]:
        raise Forbidden(
            f"route {direction} -> {target} was not disclosed by around()",
            code="route_undisclosed",
        )
    vis = _visibility(ticket)
    visible_node(target, vis=vis)
    with transaction.atomic():
        # Single use, held by the database: of two racing steps exactly one spends it.
        spent = Ticket.objects.filter(pk=ticket.pk, spent_at__isnull=True).update(
            spent_at=timezone.now()
        )
        if not spent:
            raise Forbidden("this ticket was already used for a step", code="ticket_spent")
        return _mint(node_id=target, holder=ticket.holder, vis=vis, parent=ticket)


def read_ticket(token: str, *, holder: str, agent: ApiToken | None = None) -> dict[str, Any]:
    """Read the node the ticket stands on (memory.read.read): counts as an access, and pends a
    cite for the holder when the node is wild. Does not spend the ticket. Refuses what _redeem
    and read refuse."""
    ticket = _redeem(token, holder=holder)
    vis = _visibility(ticket)
    return read(
        ticket.node_id,
        domains=vis.domains,
        actor=ticket.holder,
        as_of=vis.as_of,
        holder=ticket.holder,
        token=agent,
    )
