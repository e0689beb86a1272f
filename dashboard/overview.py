"""What the overview page shows, computed in a few aggregate queries."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db.models import CharField, Count, QuerySet
from django.db.models.functions import Cast, Substr
from django.utils import timezone

from memory.models import Event, EventKind, Node, SleepRun

CHART_DAYS = 90


def lifecycle_counts() -> dict[str, int]:
    """Live, decayed and permanent node counts and the event total (store state, now).

    Index-only counts, so a 100k-node memory costs no table scan: decayed from the decayed_at
    index; permanent from promoted_permanent events (permanence is one-way and every promotion
    is audited), counted per node."""
    total = Node.objects.count()
    decayed = Node.objects.filter(decayed_at__isnull=False).count()
    permanent = (
        Event.objects.filter(kind=EventKind.PROMOTED_PERMANENT).values("node_id").distinct().count()
    )
    return {
        "total": total,
        "live": total - decayed,
        "decayed": decayed,
        "permanent": permanent,
        "events": Event.objects.count(),
    }


def _per_day(rows: QuerySet, field: str, since: datetime) -> dict[str, int]:
    """Rows per UTC day of `field`, from the stored instant's date part: the text cast groups
    natively on SQLite (TruncDate would call back into Python for every row) and reads the
    session's UTC on PostgreSQL."""
    day = Substr(Cast(field, output_field=CharField()), 1, 10)
    grouped = rows.filter(**{f"{field}__gte": since}).annotate(day=day).values("day")
    return dict(grouped.annotate(n=Count("pk")).order_by().values_list("day", "n"))


def daily_activity(*, days: int = CHART_DAYS) -> dict[str, Any]:
    """Per UTC day over the last `days`: nodes that arrived (store clock, created_at) and decay
    events (audit clock, Event.at)."""
    today = timezone.now().date()
    first = today - timedelta(days=days - 1)
    since = datetime.combine(first, time.min, tzinfo=UTC)
    arrived = _per_day(Node.objects.all(), "created_at", since)
    decayed = _per_day(Event.objects.filter(kind=EventKind.DECAYED), "at", since)
    span = [first + timedelta(days=i) for i in range(days)]
    return {
        "days": span,
        "arrived": [arrived.get(d.isoformat(), 0) for d in span],
        "decayed": [decayed.get(d.isoformat(), 0) for d in span],
    }


def next_sleep() -> Any:
    """The django-q schedule of the sleep task, or None when nothing is scheduled."""
    from django_q.models import Schedule

    from memory.sleep import SCHEDULE_NAME

    return Schedule.objects.filter(name=SCHEDULE_NAME).order_by("next_run").first()


def last_runs(limit: int = 5) -> list[SleepRun]:
    return list(SleepRun.objects.order_by("-id")[:limit])


PENDING_CAP = 100


def pending_decay_count() -> int:
    """How many nodes the decay gate selects now, counted up to PENDING_CAP + 1 (the page says
    "100+"): the overview needs "something is waiting", not a full scan of every unread node."""
    from memory.sleep.decay import pending_decays

    return len(pending_decays(within_days=0, limit=PENDING_CAP + 1))


def latest_events(limit: int = 15) -> list[Any]:
    return list(Event.objects.select_related("node").order_by("-at", "-id")[:limit])


def chart_days_label(days: list[date]) -> str:
    return f"{days[0].isoformat()} to {days[-1].isoformat()}" if days else ""
