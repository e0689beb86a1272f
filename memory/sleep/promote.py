"""Promotion: reads earn permanence, irreversibly (DESIGN.md, Sleep).

The threshold is derived from the data, never configured: max(3, the 95th percentile
(nearest rank) of access_count among live nodes read at least once). So only the most-read
twentieth of what is read becomes permanent, and never on one or two reads. The reads must also
fall on at least READ_DAYS distinct UTC days (Node.read_days): a burst within one day counts once.
The database forbids reverting (trigger memory_node_permanent_one_way) and forbids a permanent
node to decay.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from memory import audit
from memory.models import EventKind, Node

FLOOR = 3
READ_DAYS = 3
PERCENTILE = 0.95
BATCH = 2000
ACTOR = "sleep"


def promotion_threshold() -> int:
    """The access count at which a live node becomes permanent now (see the module docstring).
    Reads no clock: access counts only."""
    read = Node.objects.filter(decayed_at__isnull=True, access_count__gt=0)
    count = read.count()
    if not count:
        return FLOOR
    ranked = read.order_by("access_count").values_list("access_count", flat=True)
    return max(FLOOR, ranked[math.ceil(PERCENTILE * count) - 1])


def promote(
    *,
    limit: int | None = None,
    dry_run: bool = False,
    beat: Callable[..., None] | None = None,
) -> dict:
    """Make permanent (permanent_at = now, store clock) every live node whose access_count has
    reached promotion_threshold() on at least READ_DAYS days, oldest id first, at most `limit`;
    each batch sets the flags and writes their promoted_permanent events in one transaction.
    Never touches decayed nodes.
    Returns {"count": promoted (or that would be), "threshold": t}."""
    threshold = promotion_threshold()
    due = Node.objects.filter(decayed_at__isnull=True, permanent=False)
    due = due.filter(access_count__gte=threshold, read_days__gte=READ_DAYS)
    ids = list(due.order_by("id").values_list("id", flat=True)[:limit])
    if dry_run:
        return {"count": len(ids), "threshold": threshold}
    promoted = 0
    for start in range(0, len(ids), BATCH):
        now = timezone.now()
        with transaction.atomic():
            # Re-checked under the write lock (BEGIN IMMEDIATE; FOR UPDATE where the database
            # has it): a node decayed meanwhile is not promoted.
            still = due.filter(pk__in=ids[start : start + BATCH]).select_for_update()
            done = sorted(still.values_list("id", flat=True))
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
