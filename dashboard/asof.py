"""The dashboard's as-of control: the datetime-local widget sends naive text, read as UTC."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.clocks import parse_instant
from memory.errors import Invalid


def parse_as_of(value: str | None) -> datetime | None:
    """An instant from the as-of box: ISO 8601; a value without an offset (what the browser's
    datetime-local widget sends) is UTC, as its label says. Empty gives None (now).

    Refuses (Invalid) text that is not an ISO 8601 date-time.
    """
    text = (value or "").strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1] in "Zz" else text)
    except ValueError:
        raise Invalid(
            f"as of {text!r} is not a date and time (expected e.g. 2024-05-08T13:56)",
            code="bad_datetime",
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parse_instant(parsed, field="as_of")


def widget_value(moment: datetime | None) -> str:
    """The value to put back into a datetime-local input (UTC, minutes)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M") if moment else ""
