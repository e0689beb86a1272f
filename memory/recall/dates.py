"""Dates named in a query, matched against the event clock (COALESCE(referent_time, created_at)).

"What did Tim say on 16 November, 2023?" names a day; "in April 2022" a month. Nodes whose
event time falls in that span become a candidate list of their own, so a question about a day
finds what was said that day even when its words differ. A year alone, or a month without a
year, is too broad to be evidence and is ignored. Spans are whole days in UTC.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

from django.db import connection

from memory.visibility import Visibility, db_time

_MONTHS = {
    name.casefold(): number
    for number in range(1, 13)
    for name in (calendar.month_name[number], calendar.month_abbr[number])
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PATTERNS = (
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s*{_YEAR}\b", re.IGNORECASE),  # 8th May, 2023
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s*{_YEAR}\b", re.IGNORECASE),  # May 8, 2023
    re.compile(rf"\b{_YEAR}-(?P<mnum>\d\d)-{_DAY}\b"),  # 2023-05-08
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),  # May 2023
)
MAX_SPANS = 3
MAX_NODES = 200


def spans(query: str) -> list[tuple[datetime, datetime]]:
    """The [start, end) spans (UTC) of the days and months the query names, at most MAX_SPANS."""
    found: list[tuple[datetime, datetime]] = []
    taken: list[tuple[int, int]] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(query or ""):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue  # "8 May 2023" is a day; its "May 2023" is not also a month
            span = _span(match.groupdict())
            if span is not None:
                taken.append(match.span())
                found.append(span)
    return found[:MAX_SPANS]


def _span(parts: dict[str, str | None]) -> tuple[datetime, datetime] | None:
    year = int(parts["year"] or 0)
    if parts.get("mnum"):
        month = int(str(parts["mnum"]))
    else:
        month = _MONTHS[str(parts["month"]).casefold()]
    try:
        if parts.get("day"):
            start = datetime(year, month, int(str(parts["day"])), tzinfo=UTC)
            return start, start + timedelta(days=1)
        start = datetime(year, month, 1, tzinfo=UTC)
    except ValueError:
        return None  # 31 April: not a date
    days = calendar.monthrange(year, month)[1]
    return start, start + timedelta(days=days)


def date_candidates(query: str, vis: Visibility) -> list[tuple[int, float]]:
    """Nodes whose event time falls in a span the query names, each scored 1.0 (a day or a
    month matched is the same evidence); at most MAX_NODES, newest first."""
    found = spans(query)
    if not found:
        return []
    where, params = vis.sql("n")
    ranges = " OR ".join(
        "(COALESCE(n.referent_time, n.created_at) >= %s AND COALESCE(n.referent_time, "
        "n.created_at) < %s)"
        for _ in found
    )
    bounds = [db_time(t) for span in found for t in span]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT n.id FROM memory_node n WHERE ({ranges}) AND {where} "
            "ORDER BY COALESCE(n.referent_time, n.created_at) DESC LIMIT %s",
            [*bounds, *params, MAX_NODES],
        )
        return [(row[0], 1.0) for row in cursor.fetchall()]
