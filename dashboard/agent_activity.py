"""What the agents did and what waits for the owner: the agents page, the overview's "since you
last looked", and the feed of what waits. Only reads.

An agent's events all carry its token (writes, proposals, and since the owner could see agents,
its reads and recalls), so everything here is read per token through the (token, at) index:
a few tokens, each a range of one index, whatever the size of the log.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from memory.models import ApiToken, Event, EventKind
from memory.tokens import actor_of
from review.queue import waiting

# The columns of the agents page: what an agent's events say it did.
ACTIVITY = {
    EventKind.ARRIVED.value: "wrote",
    EventKind.PROPOSED.value: "proposed",
    EventKind.RECALLED.value: "recalled",
    EventKind.READ.value: "read",
}
DAYS = 7
RECENT_QUERIES = 8


@dataclass
class AgentDay:
    day: date
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def cells(self) -> list[tuple[str, str, int]]:
        """(event kind, column word, count) in the page's column order."""
        return [(kind, word, self.counts.get(word, 0)) for kind, word in ACTIVITY.items()]


@dataclass
class Agent:
    token: ApiToken
    days: list[AgentDay]
    queries: list[Event]
    pending: int = 0
    declined: int = 0

    @property
    def actor(self) -> str:
        return actor_of(self.token)

    @property
    def totals(self) -> dict[str, int]:
        return {k: sum(d.counts.get(k, 0) for d in self.days) for k in ACTIVITY.values()}


def _day_sql(column: str) -> str:
    # The UTC day of a stored instant, as the overview's chart groups it.
    if connection.vendor == "postgresql":
        return f"substr(CAST({column} AS TEXT), 1, 10)"
    return f"substr({column}, 1, 10)"


def token_counts(token_id: int, *, since: datetime) -> dict[tuple[str, str], int]:
    """(UTC day, kind) -> how many events through the token since `since` (one index range)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_day_sql('at')}, kind, count(*) FROM memory_event "
            "WHERE token_id = %s AND at >= %s GROUP BY 1, 2",
            [token_id, since],
        )
        return {(str(day), kind): n for day, kind, n in cursor.fetchall()}


def declined_by_proposer() -> dict[str, int]:
    """How many of each agent's proposals the owner declined (each decline names its proposer)."""
    found: dict[str, int] = defaultdict(int)
    for detail in Event.objects.filter(kind=EventKind.DECLINED).values_list("detail", flat=True):
        if isinstance(detail, dict) and isinstance(detail.get("proposer"), str):
            found[detail["proposer"]] += 1
    return dict(found)


def pending_by_agent() -> dict[str, int]:
    """Each agent's proposals waiting now, muted ones included (they wait aside)."""
    everything = waiting()
    counts = dict(everything.agents)
    for name, n in everything.muted.items():
        counts[name] = counts.get(name, 0) + n
    return counts


def agents(*, days: int = DAYS, today: date | None = None) -> list[Agent]:
    """Every token, active first, with what it did on each of the last `days` UTC days (wrote,
    proposed, recalled, read), its latest recall queries, and its pending and declined counts.
    Store and audit clocks; reads only."""
    today = today or timezone.now().date()
    first = today - timedelta(days=days - 1)
    since = datetime.combine(first, datetime.min.time(), tzinfo=UTC)
    pending = pending_by_agent()
    declined = declined_by_proposer()
    found = []
    for token in ApiToken.objects.order_by("revoked_at", "name"):
        counts = token_counts(token.pk, since=since)
        span = []
        for i in range(days):
            day = today - timedelta(days=i)
            key = day.isoformat()
            span.append(AgentDay(day, {w: counts.get((key, k), 0) for k, w in ACTIVITY.items()}))
        queries = list(
            Event.objects.filter(token=token, kind=EventKind.RECALLED)
            .only("at", "kind", "reason", "detail")
            .order_by("-at", "-id")[:RECENT_QUERIES]
        )
        actor = actor_of(token)
        found.append(
            Agent(
                token, span, queries, pending=pending.get(actor, 0), declined=declined.get(actor, 0)
            )
        )
    return found


# --- since you last looked -----------------------------------------------------------------

# The overview's mark moves to the previous visit once that visit is this old, so reloading
# the page within the hour keeps showing what was new when the owner sat down.
LOOK_RESOLUTION = timedelta(hours=1)
FIRST_LOOK = timedelta(days=7)


def last_looked(session: Any, *, now: datetime) -> datetime:
    """The instant the overview's "since you last looked" counts from, kept in the owner's
    session (never on a node: looking changes nothing the memory keeps), and the session moved
    on. Store clock."""
    seen = _instant(session.get("grove_seen_at"))
    mark = _instant(session.get("grove_looked_at")) or (seen or now - FIRST_LOOK)
    if seen is not None and now - seen >= LOOK_RESOLUTION:
        mark = seen
    session["grove_looked_at"] = mark.isoformat()
    session["grove_seen_at"] = now.isoformat()
    return mark


def _instant(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def since(mark: datetime, *, now: datetime) -> dict[str, Any]:
    """What happened since `mark` and what waits now: new proposals (and those waiting aside),
    decays done, agents' activity per token, the age of the oldest waiting proposal."""
    queue = waiting()
    oldest = queue.items[0].proposal if queue.items else None
    new_proposals = Event.objects.filter(kind=EventKind.PROPOSED, at__gte=mark).count()
    decayed = Event.objects.filter(kind=EventKind.DECAYED, at__gte=mark).count()
    activity = []
    for token in ApiToken.objects.filter(revoked_at__isnull=True).order_by("name"):
        counts: dict[str, int] = defaultdict(int)
        for (_day, kind), n in token_counts(token.pk, since=mark).items():
            if kind in ACTIVITY:
                counts[ACTIVITY[kind]] += n
        if counts:
            activity.append((token, dict(counts)))
    return {
        "mark": mark,
        "new_proposals": new_proposals,
        "waiting": len(queue.items),
        "muted": sum(queue.muted.values()),
        "decayed": decayed,
        "activity": activity,
        "oldest": oldest,
        "oldest_days": (now - oldest.at).days if oldest else None,
    }
