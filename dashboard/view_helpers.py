"""Small helpers shared by the dashboard's views."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest

from dashboard.asof import parse_as_of
from memory.errors import Invalid

OWNER_ACTOR = "owner"


def as_of_param(request: HttpRequest) -> tuple[datetime | None, str]:
    """The ?as_of= instant (naive = UTC) and an error message; a bad value means "now" plus the
    message, so the page still renders and says what was wrong."""
    try:
        return parse_as_of(request.GET.get("as_of")), ""
    except Invalid as error:
        return None, error.message
