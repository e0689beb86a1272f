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

from django.db import connection, transaction
from django.utils import timezone

from memory import audit
from memory.models import EventKind

FLOOR = 3
READ_DAYS = 3
PERCENTILE = 0.95
BATCH = 2000
ACTOR = "sleep"


def promotion_threshold() -> int:
    """The access count at which a live node becomes permanent now (see the module docstring).
    Reads no clock: access counts only."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memory_node WHERE decayed_at IS NULL AND access_count > 0"
        )
        read = cursor.fetchone()[0]
        if not read:
            return FLOOR
        cursor.execute(
            """SELECT access_count FROM memory_node
               WHERE decayed_at IS NULL AND access_count > 0
               ORDER BY access_count LIMIT 1 OFFSET %s""",
            [math.ceil(PERCENTILE * read) - 1],
        )
        return max(FLOOR, cursor.fetchone()[0])


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
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT id FROM memory_node WHERE decayed_at IS NULL AND permanent = 0
               AND access_count >= %s AND read_days >= %s ORDER BY id""",
            [threshold, READ_DAYS],
        )
        ids = [row[0] for row in cursor.fetchall()]
    if limit is not None:
        ids = ids[:limit]
    if dry_run:
        return {"count": len(ids), "threshold": threshold}
    promoted = 0
    for start in range(0, len(ids), BATCH):
        now = timezone.now()
        chunk = ids[start : start + BATCH]
        marks = ",".join(["%s"] * len(chunk))
        with transaction.atomic():
            with connection.cursor() as cursor:
                # Re-checked under the write lock: a node decayed meanwhile is not promoted.
                cursor.execute(
                    f"""UPDATE memory_node SET permanent = 1, permanent_at = %s
                        WHERE id IN ({marks}) AND permanent = 0 AND decayed_at IS NULL
                        RETURNING id""",
                    [connection.ops.adapt_datetimefield_value(now), *chunk],
                )
                done = sorted(row[0] for row in cursor.fetchall())
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
