"""The two clocks.

Store clock = Node.created_at; event clock = COALESCE(referent_time, created_at).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from memory.errors import Invalid

RECENCY_SCALE_DAYS = 365.0
# A day inside datetime's range on each side: the clocks add and subtract days around an instant
# (as-of windows, recency), which must never overflow into a 500.
EARLIEST = datetime.min.replace(tzinfo=UTC) + timedelta(days=1)
LATEST = datetime.max.replace(tzinfo=UTC) - timedelta(days=1)


def parse_instant(value: str | datetime | None, *, field: str = "referent_time") -> datetime | None:
    """Parse an ISO 8601 instant that carries an offset ('Z' accepted) and return it in UTC.

    Refuses naive and unparseable values with a message naming the problem: a time without a
    zone is never guessed. Refuses instants within a day of datetime's range (years 0001 and
    9999 at their edges), which would overflow once converted or shifted.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise Invalid(
                f"{field} {value!r} is not an ISO 8601 date-time "
                "(expected e.g. 2024-05-08T13:56:00+02:00)",
                code="bad_datetime",
            ) from None
    else:
        raise Invalid(
            f"{field} must be an ISO 8601 string, not {type(value).__name__}", code="bad_datetime"
        )
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise Invalid(
            f"{field} {value!s} has no time zone offset; add one (e.g. Z or +02:00) "
            "so it is not guessed",
            code="naive_datetime",
        )
    try:
        instant = parsed.astimezone(UTC)
    except OverflowError:
        instant = None
    if instant is None or not EARLIEST <= instant <= LATEST:
        raise Invalid(
            f"{field} {value!s} is out of range: use an instant between "
            f"{EARLIEST.date()} and {LATEST.date()} (UTC)",
            code="bad_datetime",
        )
    return instant


def recency_weight(event_time: datetime | str | None, *, now: datetime) -> float:
    """Ranking weight in [0.5, 1.0] from the event clock, on a one-year scale.

    Unknown or unparseable times give 1.0 (no penalty for what we cannot date); future times 1.0.
    """
    if event_time is None:
        return 1.0
    if isinstance(event_time, str):
        try:
            event_time = parse_instant(event_time)
        except Invalid:
            return 1.0
        if event_time is None:
            return 1.0
    if event_time.tzinfo is None:
        return 1.0
    age_days = (now - event_time).total_seconds() / 86400.0
    if age_days <= 0:
        return 1.0
    return 0.5 + 0.5 * math.exp(-age_days / RECENCY_SCALE_DAYS)
