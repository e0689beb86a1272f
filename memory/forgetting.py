"""Forgetting as the owner sees it and acts on it by day: what the next sweeps will collect (the
pending list, derived on each call, never stored), why nothing holds a node that will decay and
what holds a live one, and the owner's keep, let go and restore. The rules themselves (roots,
holding edges, the mark) live in memory/reach.py; the night's sweep in memory/sleep/decay.py.
Ages are by the store clock (created_at).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memory import audit, reach
from memory.chunks import chunks, like_containing
from memory.errors import Conflict, NotFound
from memory.models import (
    DecayReason,
    EdgeKind,
    Event,
    EventKind,
    Kind,
    Node,
    SleepRun,
    SleepStatus,
)
from memory.trust import WORDLESS, trust_map

SHOWN = 3  # neighbours named per row; the rest are counted
_OWNED = {
    reach.OWNER_WROTE: "written by the owner",
    reach.OWNER_RESTORE: "restored by the owner",
}


def _edges(ids: list[int]) -> list[tuple[int, int, str]]:
    """Edges touching `ids` whose both ends are live."""
    found: list[tuple[int, int, str]] = []
    for start in range(0, len(ids), 400):
        chunk = ids[start : start + 400]
        marks = ",".join(["%s"] * len(chunk))
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT e.from_node_id, e.to_node_id, e.kind FROM memory_edge e
                    JOIN memory_node a ON a.id = e.from_node_id
                    JOIN memory_node b ON b.id = e.to_node_id
                    WHERE (e.from_node_id IN ({marks}) OR e.to_node_id IN ({marks}))
                    AND a.decayed_at IS NULL AND b.decayed_at IS NULL ORDER BY e.id""",
                [*chunk, *chunk],
            )
            found += cursor.fetchall()
    return found


# Each edge kind in plain words, one source for every why the owner reads: a holding kind as
# the sentence its holder says ({a} holds {b}), a kind that never holds as the name of the link.
# Every kind has its words (memory_edge_kind_valid admits no other).
EDGE_WORDS: dict[str, str] = {
    EdgeKind.DERIVED_FROM: "{a} came from {b}",
    EdgeKind.CITES: "{a} cites {b}",
    EdgeKind.NESTS: "{b} is part of {a}",
    EdgeKind.ASKS_ABOUT: "{a} asks about {b}",
    EdgeKind.ANSWERS: "{a} answers {b}",
    EdgeKind.FEEDS: "{a} feeds the question {b}",
    EdgeKind.REOPENS: "{a} reopens the question {b}",
    EdgeKind.RESPONDS_TO: "'next turn' in its conversation",
    EdgeKind.SIMILAR: "'similar', made by sleep",
    EdgeKind.CONSOLIDATED_INTO: "'merged into', made by sleep",
}
NOT_READ = "no agent read it"  # the fact that would have kept any pending node


def _said(kind: str, a: str, b: str) -> str:
    return EDGE_WORDS[kind].format(a=a, b=b)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _phrases(
    node_id: int, edges: list[tuple[int, int, str]], now_garbage: set[int], question: bool
) -> list[str]:
    """Why nothing keeps one pending node, in plain words: first the fact that would have kept
    it (an agent's read; an open question), then what depends on it, what it depends on, and
    the links that never keep a node."""
    lead = [NOT_READ, "its question is answered"] if question else [NOT_READ]
    holders = [e for e in edges if e[2] in reach.HOLDING and e[1] == node_id and e[0] != node_id]
    held = [e for e in edges if e[2] in reach.HOLDING and e[0] == node_id]
    loose = sorted({e[2] for e in edges if e[2] not in reach.HOLDING})
    out = [*lead, "nothing you keep depends on it"]
    for src, _dst, kind in holders[:SHOWN]:
        said = _said(kind, f"#{src}", "it")
        if src in now_garbage:
            out.append(f"{said}, but nothing keeps #{src} either")
        else:
            out.append(f"{said}, and keeps it only while #{src} is new")
    if len(holders) > SHOWN:
        out.append(f"and {len(holders) - SHOWN} more that depend on it go too")
    out += [
        f"{_said(kind, 'it', f'#{dst}')}; that keeps #{dst}, not it"
        for _, dst, kind in held[:SHOWN]
    ]
    if len(held) > SHOWN:
        out.append(f"and it depends on {len(held) - SHOWN} more, which do not keep it")
    if loose:
        names = [EDGE_WORDS[k] for k in loose]
        lead_words = "its only link" if not holders and not held else "its other link"
        out.append(f"{lead_words}{'s are' if len(names) > 1 else ' is'} {_and(names)}")
    if not edges:
        out.append("it has no links to anything alive")
    return out


def why_rows(ids: list[int], *, now_garbage: Iterable[int]) -> dict[int, list[str]]:
    """For each pending node in `ids`, why nothing keeps it, in plain words (_phrases; edge
    kinds as EDGE_WORDS names them, at most SHOWN of each side named, the rest counted). A
    holder in `now_garbage` goes too; any other holder keeps it only while it is new."""
    wanted = set(ids)
    gone = {int(i) for i in now_garbage}
    by_node: dict[int, list[tuple[int, int, str]]] = {i: [] for i in ids}
    for edge in _edges(ids):
        for end in {edge[0], edge[1]} & wanted:
            by_node[end].append(edge)
    questions = set(
        Node.objects.filter(pk__in=ids, kind=Kind.QUESTION).values_list("id", flat=True)
    )
    return {
        node_id: _phrases(node_id, edges, gone, node_id in questions)
        for node_id, edges in by_node.items()
    }


def root_reasons(ids: Iterable[int]) -> dict[int, list[str]]:
    """Why each live node in `ids` holds itself (an empty list: it is not a root). Store clock."""
    age = settings.GROVE_DECAY_MIN_AGE_DAYS
    now = timezone.now()
    nodes = Node.objects.filter(pk__in=list(ids), decayed_at__isnull=True).in_bulk()
    trusts = trust_map(list(nodes))
    owned: dict[int, str] = {}
    events = Event.objects.filter(node_id__in=list(nodes)).filter(
        Q(kind=EventKind.KEPT) | Q(kind=EventKind.RESTORED, reason=reach.OWNER_RESTORE)
    )
    for node_id, reason in events.values_list("node_id", "reason"):
        owned[node_id] = _OWNED.get(reason, "kept by the owner")
    questions = {i for i, n in nodes.items() if n.kind == Kind.QUESTION}
    open_q = set(reach.open_question_ids().tolist()) if questions else set()
    out: dict[int, list[str]] = {}
    for node_id, node in nodes.items():
        why = []
        if node.permanent:
            why.append("permanent")
        if trusts.get(node_id) in reach.PROTECTED_TRUST:
            why.append(str(trusts[node_id]))
        if node.access_count:
            reads, days = node.access_count, node.read_days
            by = f", last by {node.last_read_by}" if node.last_read_by else ""
            why.append(
                f"read {reads} time{'s' * (reads != 1)} on {days} day{'s' * (days != 1)}{by}"
            )
        if node_id in owned:
            why.append(owned[node_id])
        if node.created_at > now - timedelta(days=age):
            why.append(f"young ({(now - node.created_at).days} of {age} days)")
        if node_id in open_q:
            why.append("an open question")
        out[node_id] = why
    return out


def held_by(node_id: int, *, cap: int = 2000) -> dict[str, Any]:
    """What holds a live node: {"roots": why it holds itself} when it is a root, else the
    shortest chain of holders up to a root, {"chain": [(holder id, edge kind), ...], "roots":
    the last holder's reasons}; {"chain": [], "roots": []} when nothing does (it will decay).
    Walks holding edges backwards, one query per level, at most `cap` nodes."""
    own = root_reasons([node_id]).get(node_id, [])
    if own:
        return {"chain": [], "roots": own}
    came: dict[int, tuple[int, str]] = {}
    frontier, seen = [node_id], {node_id}
    while frontier and len(seen) < cap:
        marks = ",".join(["%s"] * len(frontier))
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT e.from_node_id, e.to_node_id, e.kind FROM memory_edge e
                    JOIN memory_node n ON n.id = e.from_node_id
                    WHERE e.to_node_id IN ({marks}) AND e.kind IN ({reach.HOLDING_SQL})
                    AND n.decayed_at IS NULL ORDER BY e.id""",
                frontier,
            )
            level = []
            for src, dst, kind in cursor.fetchall():
                if src not in seen:
                    seen.add(src)
                    came[src] = (dst, kind)
                    level.append(src)
        reasons = root_reasons(level)
        for holder in level:
            if reasons.get(holder):
                chain, at = [], holder
                while at != node_id:
                    chain.append((at, came[at][1]))
                    at = came[at][0]
                return {"chain": chain[::-1], "roots": reasons[holder]}
        frontier = level
    return {"chain": [], "roots": []}


def _release_days(
    later: reach.Mark, created: dict[int, datetime], now: datetime, age: float
) -> dict[int, float]:
    """Days until each node of `later.garbage` is unheld: its own age reaching `age`, and every
    holder released first (a node lives while any holder does). Holders-first order makes one
    pass enough; a holding cycle is approximated by its members' own ages."""
    src, dst = later.edges
    inside = np.isin(src, later.garbage)
    holders: dict[int, list[int]] = {}
    for s, d in zip(src[inside].tolist(), dst[inside].tolist(), strict=True):
        holders.setdefault(d, []).append(s)
    until: dict[int, float] = {}
    for node_id in reach.holders_first(later.garbage, later.edges):
        own = max(0.0, age - (now - created[node_id]).total_seconds() / 86400)
        until[node_id] = max([own, *(until.get(h, 0.0) for h in holders.get(node_id, ()))])
    return until


def _created_at(ids: list[int]) -> dict[int, datetime]:
    created: dict[int, datetime] = {}
    for chunk in chunks(ids):
        created.update(Node.objects.filter(pk__in=chunk).values_list("id", "created_at"))
    return created


def _in_domains(ids: list[int], domains: list[str] | None, limit: int | None) -> list[int]:
    """`ids` (in their order) whose node is in `domains`, the first `limit` of them: read a
    chunk at a time, so a page asking for 50 reads about 50, not every pending node."""
    if domains is None:
        return ids[:limit]
    found: list[int] = []
    for chunk in chunks(ids):
        inside = set(
            Node.objects.filter(pk__in=chunk, domain__in=domains).values_list("id", flat=True)
        )
        found += [i for i in chunk if i in inside]
        if limit is not None and len(found) >= limit:
            return found[:limit]
    return found


def _ranked(
    at_now: reach.Mark,
    later: reach.Mark,
    *,
    now: datetime,
    age: float,
    domains: list[str] | None,
    limit: int | None,
) -> tuple[list[int], list[int], dict[int, float]]:
    """Eligible now (oldest id first) and the rest of `later` by days until eligible, at most
    `limit` in all, with the days of each. The days need every later node's creation time, so
    they are computed only when the eligible-now nodes leave room under `limit`."""
    # Sliced before the list is made: a page asks for 51 of 30,000.
    first = at_now.garbage if domains is not None or limit is None else at_now.garbage[:limit]
    eligible = _in_domains(first.tolist(), domains, limit)
    if later is at_now or (limit is not None and len(eligible) >= limit):
        return eligible, [], {}
    until = _release_days(later, _created_at(later.garbage.tolist()), now, age)
    soon = later.garbage[~np.isin(later.garbage, at_now.garbage)].tolist()
    soon.sort(key=lambda i: (until[i], i))
    room = None if limit is None else limit - len(eligible)
    return eligible, _in_domains(soon, domains, room), until


HORIZONS = (0, 7, 30, 90)  # the pending page's tabs: the next sleep, then within N days
GROUP_FILTERS = ("domain", "kind", "jurisdiction", "author", "words", "origin")


@dataclass(frozen=True)
class PendingMarks:
    """One read of the graph for the pending page (reach.marks): a mark per horizon (HORIZONS)
    and one at `within_days`, all taken at `now`. Marking is most of the page's cost, so every
    part of the page asks these; `derived` keeps what the page works out from them (ids,
    groups, matches), shared by every view of the same graph."""

    now: datetime
    horizons: dict[int, reach.Mark]
    within: reach.Mark
    within_days: float
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def ids(self) -> dict[int, list[int]]:
        return {days: self.at(days) for days in self.horizons}

    def at(self, horizon: int) -> list[int]:
        """The ids pending at `horizon` (one of HORIZONS), sorted."""
        if (key := ("ids", horizon)) not in self.derived:
            self.derived[key] = self.horizons[horizon].garbage.tolist()
        found: list[int] = self.derived[key]
        return found


# The marks of the last few graph states read (reach.fingerprint), in this process: a second
# view of an unchanged graph walks nothing. Kept in memory only: viewing writes nothing.
_KEPT_STATES = 2  # the page (within 7 days by default) and a bulk act (the horizons alone)
_kept: dict[tuple[Any, ...], PendingMarks] = {}


def pending_marks(*, within_days: float = 0, now: datetime | None = None) -> PendingMarks:
    """The marks at each horizon and at `within_days` from now, from one read, or from the last
    read of a graph whose fingerprint is the same (then the same marks, reach.fingerprint).
    Store clock."""
    now = now or timezone.now()
    age = settings.GROVE_DECAY_MIN_AGE_DAYS
    days = (*HORIZONS, within_days)
    cutoffs = [now - timedelta(days=age - d) for d in days]
    key = (age, days, reach.fingerprint(cutoffs))
    kept = _kept.get(key)
    if kept is None:
        found = reach.marks(cutoffs)
        horizons = dict(zip(HORIZONS, found, strict=False))
        within = horizons[0] if within_days <= 0 else found[-1]
        kept = PendingMarks(now, horizons, within, within_days)
        while len(_kept) >= _KEPT_STATES:
            _kept.pop(next(iter(_kept)), None)
        _kept[key] = kept
    return replace(kept, now=now)  # the same marks and derived parts, at this view's clock


def pending_decays(
    *,
    within_days: float = 0,
    domains: Iterable[str] | None = None,
    limit: int | None = None,
    now: datetime | None = None,
    marks: PendingMarks | None = None,
) -> list[dict[str, Any]]:
    """What a sweep would collect now, and what it will collect within `within_days` if nobody
    reads, keeps or links anything: derived on each call (two marks from one read of the graph,
    reach.marks, or the page's `marks`, whose clock and horizon then rule), never stored.
    Store clock.

    Each item: id, kind, domain, excerpt, created_at, age_days, eligible_now,
    days_until_eligible, and why (phrases saying why nothing holds it). Eligible now first
    (oldest id first), then by days until eligible; with `limit`, the `limit` first.
    """
    age = settings.GROVE_DECAY_MIN_AGE_DAYS
    if marks is not None:
        now, at_now, later = marks.now, marks.horizons[0], marks.within
    else:
        now = now or timezone.now()
        cutoffs = [now - timedelta(days=age)]
        if within_days > 0:
            cutoffs.append(now - timedelta(days=age - within_days))
        found = reach.marks(cutoffs)
        at_now, later = found[0], found[-1]
    chosen = None if domains is None else list(domains)
    eligible, soon, until = _ranked(at_now, later, now=now, age=age, domains=chosen, limit=limit)
    # Live only: a node the sweep or the owner decayed since the mark is no longer pending.
    nodes = Node.objects.filter(decayed_at__isnull=True).in_bulk([*eligible, *soon])
    rows: list[dict[str, Any]] = []
    now_ids = set(eligible)
    for node_id in [i for i in [*eligible, *soon] if i in nodes]:
        node, eligible_now = nodes[node_id], node_id in now_ids
        rows.append(
            {
                "id": node_id,
                "kind": node.kind,
                "domain": node.domain,
                "excerpt": node.body[:160],
                "created_at": node.created_at.isoformat(),
                "age_days": round((now - node.created_at).total_seconds() / 86400, 1),
                "eligible_now": eligible_now,
                "days_until_eligible": round(0.0 if eligible_now else until[node_id], 1),
            }
        )
    why = why_rows([int(r["id"]) for r in rows], now_garbage=at_now.garbage)
    for row in rows:
        row["why"] = [*why[int(row["id"])], arrived_words(float(row["age_days"]), age)]
    return rows


def arrived_words(age_days: float, age: float) -> str:
    """How old a pending node is, beside the age under which every node is kept."""
    if age_days < age:
        return f"it is still new ({age_days:g} of the {age:g} days new nodes are kept)"
    return f"it arrived {age_days:.0f} days ago"


def pending_count(*, now: datetime | None = None) -> int:
    """How many nodes a sweep would collect now (one mark; nothing else read). Store clock."""
    now = now or timezone.now()
    return len(reach.mark(now - timedelta(days=settings.GROVE_DECAY_MIN_AGE_DAYS)).garbage)


def _node(node_id: int) -> Node:
    node = Node.objects.filter(pk=node_id).first()
    if node is None:
        raise NotFound(f"node {node_id} does not exist")
    return node


def keep(node_id: int, *, actor: str) -> Node:
    """The owner keeps a node: an explicit act with its kept event, which makes the node a root
    (memory/reach.py) holding what it depends on. Not a read: the access counts are untouched,
    so Keep never moves the promotion threshold nor makes a node permanent. Refuses (Conflict) a
    decayed node: restore it first."""
    with transaction.atomic():
        node = _node(node_id)
        if node.decayed_at is not None:
            raise Conflict(f"node {node_id} has decayed; restore it to keep it", code="decayed")
        audit.record(EventKind.KEPT, node=node_id, actor=actor, reason=reach.OWNER_KEEP)
    node.refresh_from_db()
    return node


def let_go(node_id: int, *, actor: str) -> Node:
    """The owner lets a node go now, held or not: decayed, reason owner_let_go. Refuses
    (Conflict) a node that is already decayed, permanent, or ground, proposed or sealed."""
    with transaction.atomic():
        node = _node(node_id)
        if node.decayed_at is not None:
            raise Conflict(f"node {node_id} has already decayed", code="already_decayed")
        if node.permanent:
            raise Conflict(
                f"node {node_id} is permanent: reads made it so, and that never reverts",
                code="permanent",
            )
        trust = trust_map([node_id])[node_id]
        if trust in reach.PROTECTED_TRUST:
            raise Conflict(
                f"node {node_id} is {trust}; a {trust} node is never let go", code=f"is_{trust}"
            )
        Node.objects.filter(pk=node_id).update(decayed_at=timezone.now())
        audit.record(EventKind.DECAYED, node=node_id, actor=actor, reason=DecayReason.OWNER_LET_GO)
    node.refresh_from_db()
    return node


def restore(node_id: int, *, actor: str) -> Node:
    """Bring a decayed node back to live (restored, reason owner_restore: the owner's keep, so it
    is a root from now on), and with it every decayed node it holds (restored, reason
    held_by_restore, related to it), in one transaction. Refuses (Conflict) a live node. Access
    counts are untouched: restoring is not reading."""
    with transaction.atomic():
        node = _node(node_id)
        if node.decayed_at is None:
            raise Conflict(f"node {node_id} is live; there is nothing to restore", code="live")
        Node.objects.filter(pk=node_id).update(decayed_at=None)
        audit.record(EventKind.RESTORED, node=node_id, actor=actor, reason=reach.OWNER_RESTORE)
        reach.restore_held(node_id, actor=actor, reason=reach.HELD_BY_RESTORE)
    node.refresh_from_db()
    return node


def held_back() -> dict[str, Any] | None:
    """What the last sleep's guard on mass forgetting held back and the owner has not released:
    {"count", "live", "share" (of live, 3 decimals), "run"}, or None. Reads the last finished
    sleep run that ran its decay step (its steps are the durable record) and the releases."""
    runs = SleepRun.objects.filter(status=SleepStatus.DONE, dry_run=False).order_by("-id")
    for run in runs[:20]:
        step = run.steps.get("decay")
        if step is None:
            continue
        count = int(step.get("held_back", 0))
        after = Event.objects.filter(kind=EventKind.DECAYS_RELEASED, at__gte=run.started_at)
        if not count or after.exists():
            return None
        live = int(step["live"])
        return {"count": count, "live": live, "share": round(count / live, 3), "run": run.pk}
    return None


def release_held(*, actor: str) -> Event:
    """The owner releases what the guard held back: a decays_released event naming the count
    the next sweep collects (what is pending now: the held-back count less what the owner kept
    or let go since, so the record and the page say what will happen), the count held back, and
    the cutoff (the highest node id now: what was pending then, never what arrives later), which
    the next sweep collects (memory/sleep/decay.py). Store clock. Refuses (Conflict) when
    nothing is held back."""
    with transaction.atomic():
        held = held_back()
        if held is None:
            raise Conflict("sleep held nothing back; there is nothing to release", code="none_held")
        through = Node.objects.order_by("-id").values_list("id", flat=True).first() or 0
        detail = {
            "count": pending_count(),
            "held_back": held["count"],
            "through_node": through,
            "run": held["run"],
        }
        return audit.record(
            EventKind.DECAYS_RELEASED,
            node=None,
            actor=actor,
            reason="owner_release",
            detail=detail,
        )


def pending_ids(*, now: datetime | None = None) -> dict[int, list[int]]:
    """The ids each horizon's sweeps would collect (HORIZONS: 0 is the next sleep), from one
    read of the graph (reach.marks); each horizon holds the ones before it. Store clock."""
    return pending_marks(now=now).ids()


def _where(filters: dict[str, str]) -> tuple[str, list[Any]]:
    """SQL conditions on memory_node n for the pending page's filters (blank means any)."""
    parts: list[str] = ["n.decayed_at IS NULL"]
    params: list[Any] = []
    for name, column in (("domain", "domain"), ("kind", "kind"), ("jurisdiction", "jurisdiction")):
        if filters.get(name):
            parts.append(f"n.{column} = %s")
            params.append(filters[name])
    if filters.get("author"):
        parts.append("n.signature = %s")
        params.append(filters["author"])
    if filters.get("words"):
        parts.append("LOWER(n.body) LIKE %s ESCAPE '\\'")
        params.append(like_containing(filters["words"].lower()))
    if filters.get("origin", "").isdigit():
        # First, and as the origin's children (its few hundred, from the (to_node, kind)
        # index): SQLite then drives from them, where an EXISTS was probed for every pending id.
        parts.insert(
            0,
            "n.id IN (SELECT o.from_node_id FROM memory_edge o WHERE o.to_node_id = %s"
            " AND o.kind = 'derived_from')",
        )
        params.insert(0, int(filters["origin"]))
    return " AND ".join(parts), params


def _worded(ids: list[int], filters: dict[str, str]) -> list[int]:
    """`ids` less the sealed and rejected when the words filter is set: their words match
    nothing, so a filter never says yes or no about them."""
    if not filters.get("words"):
        return ids
    trust = trust_map(ids)
    return [i for i in ids if trust[i] not in WORDLESS]


def _among(ids: list[int]) -> tuple[str, list[Any]]:
    """`n.id` among `ids` as one SQL condition with one parameter, however many ids: a JSON
    array SQLite reads with json_each, an array PostgreSQL compares with ANY. One statement
    then does what 900-id chunks did in a query each (a GROUP BY merged again in Python)."""
    if connection.vendor == "postgresql":
        return "n.id = ANY(%s)", [ids]
    return "n.id IN (SELECT value FROM json_each(%s))", [json.dumps(ids)]


def matching_pending(
    ids: list[int], filters: dict[str, str], *, limit: int | None = None
) -> list[int]:
    """The ids of `ids` (pending) that match the page's filters, in id order (the first `limit`
    of them): what a bulk act by filter acts on. One query."""
    where, params = _where(filters)
    among, ids_param = _among(_worded(ids, filters))
    cap = f" LIMIT {int(limit)}" if limit is not None else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT n.id FROM memory_node n WHERE {where} AND {among} ORDER BY n.id{cap}",
            [*params, *ids_param],
        )
        return [int(row[0]) for row in cursor.fetchall()]


def pending_groups(ids: list[int], filters: dict[str, str]) -> list[dict[str, Any]]:
    """The pending `ids` that match `filters`, grouped by what goes together: the node it was
    derived from (its import session or conversation) and its domain, largest group first; with
    no origin, its author (signature) too. Each group: origin (id or None), origin_label (the
    origin's source, or its first words), domain, author ("" when an origin groups it),
    authors (its signers, most nodes first), count, oldest (created_at), read (how many were
    ever read). Store clock for nothing: no ages."""
    where, params = _where(filters)
    among, ids_param = _among(_worded(ids, filters))
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT (SELECT MIN(e.to_node_id) FROM memory_edge e WHERE e.from_node_id = n.id
                    AND e.kind = 'derived_from') AS origin, n.domain, n.signature,
                    COUNT(*), MIN(n.created_at), SUM(CASE WHEN n.access_count > 0
                    THEN 1 ELSE 0 END)
                FROM memory_node n WHERE {where} AND {among}
                GROUP BY origin, n.domain, n.signature""",
            [*params, *ids_param],
        )
        rows = cursor.fetchall()
    groups = _by_origin(rows)
    origins = {g["origin"] for g in groups if g["origin"] is not None}
    # A sealed or rejected origin lends no words: its group is labelled by its id alone.
    trust = trust_map(origins)
    named = Node.objects.filter(pk__in=origins).values_list("id", "source", "body")
    labels = {i: source or body[:60] for i, source, body in named if trust[i] not in WORDLESS}
    # Largest first; of equal size, by origin id (the sessions in the order they came), then
    # the groups of no origin.
    out = sorted(groups, key=lambda g: (-g["count"], g["origin"] is None, g["origin"] or 0))
    for group in out:
        group["origin_label"] = labels.get(group["origin"], "")
    return out


def _by_origin(rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """(origin, domain, author) counts merged into one group per origin and domain: a session
    is one thing to keep or let go whoever spoke in it (grouped by author, a conversation
    of two speakers was two lines a session). Nodes with no origin stay apart by author."""
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for origin, domain, author, count, oldest, read in sorted(rows, key=lambda r: -r[3]):
        key = (origin, domain) if origin is not None else (None, domain, author)
        group = groups.setdefault(
            key,
            {
                "origin": origin,
                "domain": domain,
                "author": "" if origin is not None else author,
                "authors": [],
                "count": 0,
                "oldest": oldest,
                "read": 0,
            },
        )
        group["authors"].append(author)
        group["count"] += count
        group["oldest"] = min(group["oldest"], oldest)
        group["read"] += int(read or 0)
    return list(groups.values())


_DERIVED_KEPT = 64  # groups and matches kept per graph state: the filters the owner tries


def _derived(marks: PendingMarks, key: tuple[Any, ...], work: Any) -> Any:
    if key in marks.derived:
        return marks.derived[key]
    found = work()
    if len(marks.derived) < _DERIVED_KEPT:
        marks.derived[key] = found
    return found


def groups_at(marks: PendingMarks, horizon: int, filters: dict[str, str]) -> list[dict[str, Any]]:
    """pending_groups of what is pending at `horizon` (one of HORIZONS), worked out once per
    graph state (the marks' fingerprint); copies, so a view may add to them."""
    key = ("groups", horizon, tuple(sorted(filters.items())))
    found = _derived(marks, key, lambda: pending_groups(marks.at(horizon), filters))
    return [dict(group) for group in found]


def matching_at(
    marks: PendingMarks, horizon: int, filters: dict[str, str], *, limit: int | None = None
) -> list[int]:
    """matching_pending of what is pending at `horizon`, worked out once per graph state."""
    key = ("matching", horizon, tuple(sorted(filters.items())), limit)
    found = _derived(marks, key, lambda: matching_pending(marks.at(horizon), filters, limit=limit))
    return list(found)
