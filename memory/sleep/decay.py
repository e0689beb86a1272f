"""Decay: the conservative gate, its cascade, the owner's keep / let go / restore, and the pending
list (DESIGN.md, Sleep). Every clock here is the store clock (Node.created_at), never the event
clock: a note learned today about something years ago is young.

The gate (reason age_no_access): live, not permanent, trust not ground/proposed/sealed,
access_count = 0, age >= GROVE_DECAY_MIN_AGE_DAYS, and no edge of any kind, either direction, to
a live node (decayed neighbours do not count). Liveness is read once when the step starts, so a
node decayed in this pass does not free its neighbours until the next night.

The cascade (reason cascade), stricter on age and read after the gate's pass: a derived child
(it has derived_from parents) whose parents are all decayed, age >= GROVE_CASCADE_MIN_AGE_DAYS,
access_count = 0, not permanent, trust not ground/proposed/sealed, and no live node derived from
it (a cascade never orphans a live derivation). Its other live neighbours (cites, similar ...) do
not hold it: its origin is gone and in 30 days nobody read it. Without that the cascade would
only ever repeat the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from memory import audit
from memory.errors import Conflict, NotFound
from memory.models import CEREMONY_EVENT_KINDS, DecayReason, EventKind, Node, Trust
from memory.trust import trust_map

PROTECTED_TRUST = frozenset({Trust.GROUND, Trust.PROPOSED, Trust.SEALED})
BATCH = 500
PAGE = 5000  # rows per query when the caller wants them all
ACTOR = "sleep"
_AUTHORITY = ", ".join(f"'{k.value}'" for k in CEREMONY_EVENT_KINDS)

# Each WHERE fragment reads the row as `memory_node` so one text serves SELECT and UPDATE.
_BASE = """memory_node.decayed_at IS NULL AND memory_node.permanent = FALSE
    AND memory_node.access_count = 0 AND memory_node.created_at <= %s"""
_GATE = (
    _BASE
    + """
    AND NOT EXISTS (SELECT 1 FROM memory_edge e JOIN memory_node m ON m.id = e.to_node_id
                    WHERE e.from_node_id = memory_node.id AND m.decayed_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM memory_edge e JOIN memory_node m ON m.id = e.from_node_id
                    WHERE e.to_node_id = memory_node.id AND m.decayed_at IS NULL)"""
)
# The IN (children of decayed parents) is implied by the NOT EXISTS below; it is there so
# SQLite starts from the few decayed parents instead of probing every unread node.
_CASCADE = (
    _BASE
    + """
    AND memory_node.id IN (SELECT e.from_node_id FROM memory_edge e
                           JOIN memory_node p ON p.id = e.to_node_id
                           WHERE e.kind = 'derived_from' AND p.decayed_at IS NOT NULL)
    AND NOT EXISTS (SELECT 1 FROM memory_edge e JOIN memory_node m ON m.id = e.to_node_id
                    WHERE e.from_node_id = memory_node.id AND e.kind = 'derived_from'
                    AND m.decayed_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM memory_edge e JOIN memory_node m ON m.id = e.from_node_id
                    WHERE e.to_node_id = memory_node.id AND e.kind = 'derived_from'
                    AND m.decayed_at IS NULL)"""
)
# Re-checked under the write lock: no authority act landed on the node since selection.
_NO_NEW_AUTHORITY = f"""AND NOT EXISTS (SELECT 1 FROM memory_event a
    WHERE a.node_id = memory_node.id AND a.kind IN ({_AUTHORITY}) AND a.at > %s)"""


def _db_time(value: datetime) -> str:
    return connection.ops.adapt_datetimefield_value(value)


def _select(
    where: str,
    cutoff: datetime,
    *,
    extra: str = "",
    params: Iterable = (),
    limit: int | None = None,
) -> list[dict]:
    """Rows the fragment selects, oldest (store clock) first, minus nodes whose derived trust is
    protected; at most `limit`. The partial index memory_node_decay_candidates serves both the
    filter and the order, so a limited query stops early."""
    page = PAGE if limit is None else max(limit, 50)
    found: list[dict] = []
    offset = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT memory_node.id, memory_node.created_at, memory_node.kind,
                           memory_node.domain, substr(memory_node.body, 1, 160),
                           EXISTS (SELECT 1 FROM memory_event a WHERE a.node_id = memory_node.id
                                   AND a.kind IN ({_AUTHORITY}))
                    FROM memory_node WHERE {where} {extra}
                    ORDER BY memory_node.created_at, memory_node.id LIMIT %s OFFSET %s""",
                [_db_time(cutoff), *params, page, offset],
            )
            rows = cursor.fetchall()
        # Trust is derived, so only nodes with authority events need it computed.
        trust = trust_map([r[0] for r in rows if r[5]])
        found += [
            {"id": r[0], "created_at": r[1], "kind": r[2], "domain": r[3], "excerpt": r[4]}
            for r in rows
            if trust.get(r[0]) not in PROTECTED_TRUST
        ]
        if len(rows) < page or (limit is not None and len(found) >= limit):
            return found[:limit] if limit is not None else found
        offset += page


def gate_candidates(*, now: datetime | None = None, min_age_days: float | None = None) -> list[int]:
    """Ids the gate selects at `now` (store clock), oldest id first."""
    now = now or timezone.now()
    age = settings.GROVE_DECAY_MIN_AGE_DAYS if min_age_days is None else min_age_days
    return [r["id"] for r in _select(_GATE, now - timedelta(days=age))]


def cascade_candidates(
    *, now: datetime | None = None, min_age_days: float | None = None
) -> list[int]:
    """Ids the cascade selects at `now` (store clock), oldest id first."""
    now = now or timezone.now()
    age = settings.GROVE_CASCADE_MIN_AGE_DAYS if min_age_days is None else min_age_days
    return [r["id"] for r in _select(_CASCADE, now - timedelta(days=age))]


def _decay_ids(
    ids: list[int], *, where: str, cutoff: datetime, since: datetime, reason: str, actor: str
) -> list[int]:
    """Flag a batch and write its events in one transaction; the gate is re-checked inside it
    (BEGIN IMMEDIATE holds the write lock), so a node read or linked meanwhile is spared."""
    now = timezone.now()
    marks = ",".join(["%s"] * len(ids))
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                f"""UPDATE memory_node SET decayed_at = %s WHERE id IN ({marks})
                    AND {where} {_NO_NEW_AUTHORITY} RETURNING id""",
                [_db_time(now), *ids, _db_time(cutoff), _db_time(since)],
            )
            done = sorted(row[0] for row in cursor.fetchall())
        audit.record_many(EventKind.DECAYED, done, actor=actor, reason=reason, at=now)
    return done


def decay(
    *,
    limit: int | None = None,
    dry_run: bool = False,
    beat: Callable[..., None] | None = None,
    now: datetime | None = None,
) -> dict:
    """The decay step: the gate, then the cascade, at most `limit` nodes in all, in batches of
    BATCH (each its own transaction, flag and event together). Store clock only.
    Returns {"count", "gate", "cascade"} (what would decay, when dry_run)."""
    now = now or timezone.now()
    since = timezone.now()
    result = {"count": 0, "gate": 0, "cascade": 0}
    for name, where, days, reason in (
        ("gate", _GATE, settings.GROVE_DECAY_MIN_AGE_DAYS, DecayReason.AGE_NO_ACCESS),
        ("cascade", _CASCADE, settings.GROVE_CASCADE_MIN_AGE_DAYS, DecayReason.CASCADE),
    ):
        cutoff = now - timedelta(days=days)
        ids = [r["id"] for r in _select(where, cutoff)]
        if limit is not None:
            ids = ids[: max(0, limit - result["count"])]
        if dry_run:
            result[name] = len(ids)
            result["count"] += len(ids)
            continue
        for start in range(0, len(ids), BATCH):
            done = _decay_ids(
                ids[start : start + BATCH],
                where=where,
                cutoff=cutoff,
                since=since,
                reason=reason,
                actor=ACTOR,
            )
            result[name] += len(done)
            result["count"] += len(done)
            if beat:
                beat(**result)
    return result


def pending_decays(
    *,
    within_days: float = 0,
    domains: Iterable[str] | None = None,
    limit: int | None = None,
    now: datetime | None = None,
) -> list[dict]:
    """What the gate and the cascade select now, and what they will select within `within_days`
    if nobody reads or links them: derived on each call, never stored. Store clock only.

    Each item: id, kind, domain, excerpt, reason (age_no_access / cascade), age_days, never_read,
    no_live_neighbour (gate) or parents_decayed (cascade), eligible_now, days_until_eligible.
    Most eligible first; with `limit`, the `limit` most eligible (each query stops early).
    """
    now = now or timezone.now()
    domains = list(domains) if domains is not None else None
    extra, params = "", []
    if domains is not None:
        marks = ",".join(["%s"] * len(domains))
        extra = f"AND memory_node.domain IN ({marks})" if domains else "AND 0"
        params = domains
    items: dict[int, dict] = {}
    for where, days, reason in (
        (_GATE, settings.GROVE_DECAY_MIN_AGE_DAYS, DecayReason.AGE_NO_ACCESS),
        (_CASCADE, settings.GROVE_CASCADE_MIN_AGE_DAYS, DecayReason.CASCADE),
    ):
        cutoff = now - timedelta(days=max(0.0, days - within_days))
        for row in _select(where, cutoff, extra=extra, params=params, limit=limit):
            if row["id"] in items:
                continue
            created = row["created_at"]
            if isinstance(created, str):
                created = datetime.fromisoformat(created)
            if timezone.is_naive(created):
                created = created.replace(tzinfo=UTC)
            age = (now - created).total_seconds() / 86400
            until = max(0.0, days - age)
            items[row["id"]] = {
                **row,
                "created_at": created.isoformat(),
                "reason": reason.value,
                "age_days": round(age, 1),
                "never_read": True,
                "no_live_neighbour": reason == DecayReason.AGE_NO_ACCESS,
                "parents_decayed": reason == DecayReason.CASCADE,
                "eligible_now": until == 0,
                "days_until_eligible": round(until, 1),
            }
    found = sorted(items.values(), key=lambda i: (i["days_until_eligible"], i["id"]))
    return found[:limit] if limit is not None else found


def _locked_node(node_id: int) -> Node:
    node = Node.objects.filter(pk=node_id).first()
    if node is None:
        raise NotFound(f"node {node_id} does not exist")
    return node


def keep(node_id: int, *, actor: str) -> Node:
    """The owner keeps a node: counts as a read (access_count +1, last_accessed_at = now, store
    clock), with a kept event. Refuses (Conflict) a decayed node: restore it first."""
    with transaction.atomic():
        node = _locked_node(node_id)
        if node.decayed_at is not None:
            raise Conflict(f"node {node_id} has decayed; restore it to keep it", code="decayed")
        Node.objects.filter(pk=node_id).update(
            access_count=F("access_count") + 1, last_accessed_at=timezone.now()
        )
        audit.record(EventKind.KEPT, node=node_id, actor=actor, reason="owner_keep")
    node.refresh_from_db()
    return node


def let_go(node_id: int, *, actor: str) -> Node:
    """The owner lets a node go now: decayed, reason owner_let_go. Refuses (Conflict) a node that
    is already decayed, permanent, or ground, proposed or sealed: those are never let go."""
    with transaction.atomic():
        node = _locked_node(node_id)
        if node.decayed_at is not None:
            raise Conflict(f"node {node_id} has already decayed", code="already_decayed")
        if node.permanent:
            raise Conflict(
                f"node {node_id} is permanent: reads made it so, and that never reverts",
                code="permanent",
            )
        trust = trust_map([node_id])[node_id]
        if trust in PROTECTED_TRUST:
            raise Conflict(
                f"node {node_id} is {trust}; a {trust} node is never let go", code=f"is_{trust}"
            )
        Node.objects.filter(pk=node_id).update(decayed_at=timezone.now())
        audit.record(EventKind.DECAYED, node=node_id, actor=actor, reason=DecayReason.OWNER_LET_GO)
    node.refresh_from_db()
    return node


def restore(node_id: int, *, actor: str) -> Node:
    """Bring a decayed node back to live, with a restored event. Refuses (Conflict) a live
    node. The access count is untouched: restoring is not reading."""
    with transaction.atomic():
        node = _locked_node(node_id)
        if node.decayed_at is None:
            raise Conflict(f"node {node_id} is live; there is nothing to restore", code="live")
        Node.objects.filter(pk=node_id).update(decayed_at=None)
        audit.record(EventKind.RESTORED, node=node_id, actor=actor, reason="owner_restore")
    node.refresh_from_db()
    return node
