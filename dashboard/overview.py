"""What the overview page shows, computed in a few aggregate queries."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from memory.models import Event, Node


def lifecycle_counts() -> dict[str, int]:
    """Live, decayed and permanent node counts and the event total (store state, now)."""
    counts = Node.objects.aggregate(
        total=Count("id"),
        live=Count("id", filter=Q(decayed_at__isnull=True)),
        decayed=Count("id", filter=Q(decayed_at__isnull=False)),
        permanent=Count("id", filter=Q(permanent=True)),
    )
    counts["events"] = Event.objects.count()
    return counts


def latest_events(limit: int = 15) -> list[Any]:
    return list(Event.objects.select_related("node").order_by("-at", "-id")[:limit])
