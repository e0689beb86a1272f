"""Visibility: the one place that decides what a caller may see (DESIGN.md, Recall and read).

A caller names its domains (None: every domain, the owner), a scope (home, wild or both) and an
instant (as_of; None: now). From these:
- a node outside the domains, or outside the scope, does not exist for the caller;
- liveness is judged now from the decayed flag, or as of T from the latest lifecycle event;
  a dig (forgotten: memory.recall.dig) turns it over: only nodes decayed now exist for it, under
  every other rule unchanged;
- sealed and rejected words are never shown, now or as of any past instant, and a node sealed or
  rejected now stays hidden from every past view; superseded nodes only where the caller asks.
recall, read, walk, authority, the graph, the agents' door and the dashboard all ask here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from django.db import connection
from django.db.models import Model, QuerySet

from memory.chunks import chunks
from memory.clocks import parse_instant
from memory.errors import Invalid, NotFound
from memory.models import CEREMONY_EVENT_KINDS, EventKind, Node, Trust
from memory.trust import trust_map

if TYPE_CHECKING:
    import numpy.typing as npt

SCOPES = ("home", "wild", "both")
LIFECYCLE_KINDS = (EventKind.DECAYED, EventKind.RESTORED, EventKind.REVIVED)
# Trust states whose words are never shown: sealed hides everything, rejected is a tombstone.
HIDDEN_TRUST = frozenset({Trust.SEALED.value, Trust.REJECTED.value})
# Ids beyond SQLite's integer range cannot name a node (and would overflow the driver).
MAX_ID = 2**63 - 1


@dataclass(frozen=True)
class Visibility:
    """What a caller may see: None domains means every domain; as_of None means now. With
    `forgotten`, the decayed nodes now instead of the live ones (a dig; never as of T)."""

    domains: tuple[str, ...] | None
    scope: str
    as_of: datetime | None
    forgotten: bool = False

    @classmethod
    def of(
        cls, *, domains: Iterable[str] | None, scope: str, as_of: Any, forgotten: bool = False
    ) -> Visibility:
        if scope not in SCOPES:
            raise Invalid(
                f"unknown scope {scope!r}; expected one of: {', '.join(SCOPES)}", code="bad_scope"
            )
        if domains is not None:
            if isinstance(domains, str):
                domains = [domains]
            domains = tuple(dict.fromkeys(str(d) for d in domains))
        when = parse_instant(as_of, field="as_of")
        if forgotten and when is not None:
            # What was forgotten is judged now: a past view has its own liveness (live_at).
            raise Invalid(
                "a dig looks at what is forgotten now; as_of is not allowed", code="bad_as_of"
            )
        return cls(domains=domains, scope=scope, as_of=when, forgotten=forgotten)

    def sql(self, alias: str = "n") -> tuple[str, list[Any]]:
        """WHERE clauses (joined by AND) for the immutable columns plus liveness now (decay
        now, for a dig)."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.domains is not None:
            if not self.domains:
                clauses.append("FALSE")
            else:
                clauses.append(f"{alias}.domain IN ({','.join(['%s'] * len(self.domains))})")
                params.extend(self.domains)
        if self.scope != "both":
            clauses.append(f"{alias}.jurisdiction = %s")
            params.append(self.scope)
        if self.forgotten:
            clauses.append(f"{alias}.decayed_at IS NOT NULL")
        elif self.as_of is None:
            clauses.append(f"{alias}.decayed_at IS NULL")
        else:
            clauses.append(f"{alias}.created_at <= %s")
            params.append(db_time(self.as_of))
        return " AND ".join(clauses) or "TRUE", params

    def row_mask(
        self,
        *,
        domain: npt.NDArray[np.int32],
        codes: Mapping[str, int],
        wild: npt.NDArray[np.bool_],
        created: npt.NDArray[np.float64],
    ) -> npt.NDArray[np.bool_] | None:
        """sql()'s twin for the vector paths (the exact scan and the ANN index): which rows pass
        domains, scope and created by as_of, given per-row domain codes (into `codes`), a wild
        flag and the store clock in epoch seconds. None when every row passes. Liveness and
        trust are judged afterwards, per candidate (live_at, lawful_trust), on every path."""
        mask: npt.NDArray[np.bool_] | None = None
        if self.domains is not None:
            wanted = [codes[d] for d in self.domains if d in codes]
            mask = np.isin(domain, wanted)
        if self.scope != "both":
            in_scope = wild if self.scope == "wild" else ~wild
            mask = in_scope if mask is None else mask & in_scope
        if self.as_of is not None:
            then = created <= self.as_of.timestamp()
            mask = then if mask is None else mask & then
        return mask

    def alive(self, node_ids: Iterable[int]) -> set[int]:
        """Which of these nodes are in the state the caller sees: live (now or at as_of,
        live_at), or for a dig decayed now."""
        if not self.forgotten:
            return live_at(node_ids, as_of=self.as_of)
        return decayed_now(node_ids)


def decayed_now(node_ids: Iterable[int]) -> set[int]:
    """Which of these nodes are decayed now (the flag)."""
    ids = list(dict.fromkeys(node_ids))
    found: set[int] = set()
    with connection.cursor() as cursor:
        for chunk in chunks(ids):
            cursor.execute(
                f"SELECT id FROM memory_node WHERE id IN ({','.join(['%s'] * len(chunk))}) "
                "AND decayed_at IS NOT NULL",
                chunk,
            )
            found.update(row[0] for row in cursor.fetchall())
    return found


def db_time(value: datetime) -> Any:
    """An instant as the database stores it, for raw SQL: Django's own adaptation (naive UTC
    text on SQLite, an aware timestamp on PostgreSQL), so comparisons are like with like."""
    return connection.ops.adapt_datetimefield_value(value)


def indexed_by(index: str) -> str:
    """`INDEXED BY index` on SQLite, nothing on PostgreSQL: for a query whose index SQLite must be
    told, since a store is never ANALYZEd and without statistics it may prefer another (or the
    rows themselves) where one index answers alone (docs/DESIGN.md, "Two engines")."""
    return f"INDEXED BY {index}" if connection.vendor == "sqlite" else ""


def first_by_id[M: Model](rows: QuerySet[M], n: int, *, newest: bool = False) -> QuerySet[M]:
    """The first (or newest) `n` of `rows` by id: their ids read first, then only those rows.
    `ORDER BY id LIMIT n` over a filter no index keeps in id order (a node's in-edges, on the
    (to_node, kind) index) reads every matching row before it sorts; the ids alone come from the
    index (docs/DESIGN.md, "Two engines")."""
    order = "-id" if newest else "id"
    first = rows.order_by(order).values("id")[:n]
    model: type[Any] = rows.model  # a concrete model's `objects` is not on the Model stub
    return cast("QuerySet[M]", model.objects.filter(pk__in=first).order_by(order))


def live_at(node_ids: Iterable[int], *, as_of: datetime | None) -> set[int]:
    """Which of these nodes were live at `as_of` (now when None).

    As of T: the latest decayed/restored/revived event with Event.at <= T decides; with no such
    event, a node was live unless its decayed_at flag is set and not after T (a decay recorded
    without an event, as raw fixtures may do)."""
    ids = list(dict.fromkeys(node_ids))
    if not ids:
        return set()
    flags: dict[int, Any] = {}
    states: dict[int, str] = {}
    live: set[int] = set()
    # Raw: on every recall, read and walk; the ORM's version measured 4x (now) to 9x (as of)
    # slower here. The decayed flag is compared as an aware instant (_aware) on both engines.
    with connection.cursor() as cursor:
        for chunk in chunks(ids):
            marks = ",".join(["%s"] * len(chunk))
            if as_of is None:
                # Now, the flag alone decides: memory_node_live (live ids) answers it without
                # reading the nodes' rows, where the flag sits behind the body (100k: 0.49 ->
                # 0.19 ms for 200 nodes). SQLite would look each id up in the table instead.
                cursor.execute(
                    f"SELECT id FROM memory_node {indexed_by('memory_node_live')} "
                    f"WHERE id IN ({marks}) AND decayed_at IS NULL",
                    chunk,
                )
                live.update(row[0] for row in cursor.fetchall())
                continue
            cursor.execute(f"SELECT id, decayed_at FROM memory_node WHERE id IN ({marks})", chunk)
            flags.update(cursor.fetchall())
            kinds = [k.value for k in LIFECYCLE_KINDS]
            cursor.execute(
                f"SELECT node_id, kind FROM memory_event WHERE node_id IN ({marks}) "
                f"AND kind IN ({','.join(['%s'] * len(kinds))}) AND at <= %s ORDER BY at, id",
                [*chunk, *kinds, db_time(as_of)],
            )
            for node_id, kind in cursor.fetchall():
                states[node_id] = kind
    if as_of is None:
        return live
    for node_id, decayed in flags.items():
        if node_id in states:
            if states[node_id] != EventKind.DECAYED:
                live.add(node_id)
        elif decayed is None or _aware(decayed) > as_of:
            live.add(node_id)
    return live


def _aware(value: datetime | str) -> datetime:
    """A stored instant as an aware datetime: SQLite's raw rows give naive UTC (text or
    datetime), PostgreSQL's aware timestamps."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _with_authority_events(ids: list[int]) -> list[int]:
    kinds = [k.value for k in CEREMONY_EVENT_KINDS]
    found: list[int] = []
    # Raw: on every recall's lawful_trust; the ORM's version measured 10x slower here. Unary +
    # keeps SQLite to one seek per node on (node_id, kind), not one per (node, kind) pair: a
    # node has a few events, and nine kinds made nine seeks each (10k: 0.32 -> 0.12 ms for
    # 200 nodes). PostgreSQL's planner needs no hint (and has no unary + on text).
    kind = "kind" if connection.vendor == "postgresql" else "+kind"
    with connection.cursor() as cursor:
        for chunk in chunks(ids):
            cursor.execute(
                f"SELECT DISTINCT node_id FROM memory_event WHERE node_id IN "
                f"({','.join(['%s'] * len(chunk))}) AND {kind} IN "
                f"({','.join(['%s'] * len(kinds))})",
                [*chunk, *kinds],
            )
            found += [row[0] for row in cursor.fetchall()]
    return found


def lawful_trust(
    node_ids: Iterable[int], *, as_of: datetime | None, include_superseded: bool
) -> dict[int, str]:
    """Trust (as of `as_of`) of the nodes a reader may be shown: never sealed or rejected, and
    never a node sealed or rejected now (as-of changes the graph's shape, never the visibility
    of content: a seal or a rejection hides the words from every past view too)."""
    ids = list(dict.fromkeys(node_ids))
    # Most nodes were never reviewed: one indexed probe finds the few with authority events,
    # and only those pay for trust_map's derivation.
    judged = _with_authority_events(ids)
    trusts = dict.fromkeys(ids, Trust.UNREVIEWED.value)
    trusts.update(trust_map(judged, as_of=as_of))
    if as_of is not None:
        now = dict.fromkeys(ids, Trust.UNREVIEWED.value)
        now.update(trust_map(judged))
        trusts = {i: t for i, t in trusts.items() if now[i] not in HIDDEN_TRUST}
    hidden = HIDDEN_TRUST if include_superseded else HIDDEN_TRUST | {Trust.SUPERSEDED.value}
    return {i: t for i, t in trusts.items() if t not in hidden}


def shown_trust(node_ids: Iterable[int], *, as_of: datetime | None) -> dict[int, str]:
    """Trust as of `as_of` (now when None) for views that label rather than hide (the owner's
    authority report and origins): a node sealed or rejected now shows that trust in every past
    view too, so its words stay hidden there (as lawful_trust does for readers)."""
    ids = list(dict.fromkeys(node_ids))
    trusts = trust_map(ids, as_of=as_of)
    if as_of is None:
        return trusts
    now = trust_map(ids)
    return {i: now[i] if now[i] in HIDDEN_TRUST else t for i, t in trusts.items()}


def lawful(ids: Iterable[int], vis: Visibility) -> dict[int, str]:
    """id -> trust for the ids a caller under `vis` may be shown: in its domains and scope,
    created by as_of, live (at as_of), neither sealed nor rejected (now or then). Superseded
    ones are included, for the caller to label. Used by walk routes and authority origins."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    where, params = vis.sql("n")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT n.id FROM memory_node n WHERE n.id IN ({','.join(['%s'] * len(ids))}) "
            f"AND {where}",
            [*ids, *params],
        )
        inside = [row[0] for row in cursor.fetchall()]
    return lawful_trust(vis.alive(inside), as_of=vis.as_of, include_superseded=True)


def node_in_domains(node_id: Any, *, domains: Iterable[str] | None = None) -> Node:
    """The node if it exists within `domains` (all when None); else NotFound, the same answer
    for a missing id and for one outside the caller's domains."""
    try:
        pk = int(node_id)
    except (TypeError, ValueError, OverflowError):
        raise NotFound(f"node {node_id!r} not found") from None
    if not 0 < pk <= MAX_ID:
        raise NotFound(f"node {node_id!r} not found")
    qs = Node.objects.filter(pk=pk)
    if domains is not None:
        qs = qs.filter(domain__in=list(domains))
    node = qs.first()
    if node is None:
        raise NotFound(f"node {node_id} not found")
    return node


def visible_ids(ids: Iterable[int], *, domains: Iterable[str] | None) -> set[int]:
    """Which of these nodes exist for a caller of `domains`: in scope, neither sealed nor
    rejected (decayed ones included: the write path may revive them)."""
    wanted = {pk for pk in ids if 0 < pk <= MAX_ID}
    qs = Node.objects.filter(pk__in=wanted)
    if domains is not None:
        qs = qs.filter(domain__in=list(domains))
    in_scope = set(qs.values_list("pk", flat=True))
    # Trust of every id asked about, found or not: a missing id costs what a sealed one does.
    trust = trust_map(wanted or {0})
    return {pk for pk in in_scope if trust[pk] not in HIDDEN_TRUST}
