"""Promotion: reads earn permanence, irreversibly (DESIGN.md, Sleep).

The threshold is derived from the data, never configured, and counted in reading days: max(3,
the 95th percentile (nearest rank) of read_days, the distinct UTC days on which agents read a
node, among live nodes read at least once). A node becomes permanent once it was read on that
many days. So only the most steadily read twentieth of what is read becomes permanent, never on
one or two days; and no burst moves the threshold or meets it, for a burst within one day is one
day (a node read ten times in an hour once set a threshold of 13 reads that a node read on three
days could not reach). The owner's Keep is not a read: it is its own root (memory/reach.py) and
never makes a node permanent. The database forbids reverting (trigger
memory_node_permanent_one_way) and forbids a permanent node to decay.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from memory import audit
from memory.models import EventKind, Node
from memory.visibility import indexed_by

FLOOR = 3  # reading days: never permanent on one or two
PERCENTILE = 0.95
# Live nodes read at least once: the terms of the partial index memory_node_read_live, spelled
# as its WHERE so SQLite can use it (a bound parameter would not match the literal 0).
_READ_LIVE = "decayed_at IS NULL AND access_count > 0"
BATCH = 2000
ACTOR = "sleep"


def promotion_threshold() -> int:
    """The reading days (Node.read_days) at which a live node becomes permanent now (see the
    module docstring). Reads no clock: stored counts only."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM memory_node {_read_live()} WHERE {_READ_LIVE}")
        count = cursor.fetchone()[0]
        if not count:
            return FLOOR
        cursor.execute(
            f"SELECT read_days FROM memory_node {_read_live()} WHERE {_READ_LIVE} "
            "ORDER BY read_days LIMIT 1 OFFSET %s",
            [math.ceil(PERCENTILE * count) - 1],
        )
        at_percentile: int = cursor.fetchone()[0]
        return max(FLOOR, at_percentile)


def _read_live() -> str:
    """The live read nodes through their partial index, named on SQLite: a store is never
    ANALYZEd, and without statistics SQLite took `decayed_at IS NULL` for a selective equality
    on the full decayed_at index (gone in 0017) and walked every live node (1M: 1.1 s, against
    22 ms here). Named still, so that no other index can take its place."""
    return indexed_by("memory_node_read_live")


def promote(
    *,
    limit: int | None = None,
    dry_run: bool = False,
    beat: Callable[..., None] | None = None,
) -> dict[str, Any]:
    """Make permanent (permanent_at = now, store clock) every live node read on at least
    promotion_threshold() days, oldest id first, at most `limit`;
    each batch sets the flags and writes their promoted_permanent events in one transaction.
    Never touches decayed nodes.
    Returns {"count": promoted (or that would be), "threshold": t}."""
    threshold = promotion_threshold()
    ids = _due(threshold, limit=limit)
    if dry_run:
        return {"count": len(ids), "threshold": threshold}
    promoted = 0
    for start in range(0, len(ids), BATCH):
        now = timezone.now()
        with transaction.atomic():
            # Re-checked under the write lock (BEGIN IMMEDIATE; FOR UPDATE where the database
            # has it): a node decayed meanwhile is not promoted.
            done = _due(threshold, ids=ids[start : start + BATCH])
            Node.objects.filter(pk__in=done).update(permanent=True, permanent_at=now)
            audit.record_many(
                EventKind.PROMOTED_PERMANENT,
                done,
                actor=ACTOR,
                reason="reads",
                detail={"threshold": threshold},
                at=now,
            )
        promoted += len(done)
        if beat:
            beat(count=promoted, threshold=threshold)
    return {"count": promoted, "threshold": threshold}


def _due(threshold: int, *, ids: list[int] | None = None, limit: int | None = None) -> list[int]:
    """Live nodes due for permanence, oldest id first: read on at least `threshold` days, not
    yet permanent. All of them through memory_node_read_live; or those
    of `ids` still due, looked up by id and locked where the database can (the re-check under
    the write lock)."""
    sql = (
        f"SELECT id FROM memory_node {_read_live() if ids is None else ''} WHERE {_READ_LIVE} "
        "AND NOT permanent AND read_days >= %s"
    )
    params: list[int] = [threshold]
    if ids is not None:
        sql += f" AND id IN ({','.join(['%s'] * len(ids))})"
        params += ids
    sql += " ORDER BY id"
    if limit is not None:
        sql += " LIMIT %s"
        params.append(max(0, limit))
    if ids is not None and connection.features.has_select_for_update:
        sql += " FOR UPDATE"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]
