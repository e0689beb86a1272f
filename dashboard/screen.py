"""The pages' door: every query-string and form field (names and values), on every page of the
dashboard and the desk, is screened by memory/inputs.py's text rule before any view runs, so a
NUL or a lone surrogate answers one plain 400 instead of a 500 on PostgreSQL, a stream cut short,
or a SQLite memory that could never move. The agents' API screens its own JSON (agents/views.py)
and answers in its own shape, so /api/ passes through untouched."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.request import QueryDict

from memory.inputs import bad_text_reason


def _first_bad(fields: QueryDict) -> str | None:
    for name, values in fields.lists():
        for text in (name, *values):
            if (reason := bad_text_reason(text)) is not None:
                return reason
    return None


class ScreenInputMiddleware:
    """Refuse (400, plain text) a request whose GET or POST fields hold unstorable text."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith("/api/"):
            fields = [request.GET, request.POST] if request.method == "POST" else [request.GET]
            for field in fields:
                if (reason := _first_bad(field)) is not None:
                    return HttpResponseBadRequest(
                        f"Refused: {reason}.", content_type="text/plain; charset=utf-8"
                    )
        return self.get_response(request)
