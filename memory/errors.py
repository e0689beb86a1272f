"""Refusals the engine raises. Each carries a stable code and the HTTP status the API maps it to."""

from __future__ import annotations


class GroveError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code


class Invalid(GroveError):
    """The input is malformed or breaks a rule of the write path."""


class Conflict(GroveError):
    status = 409
    code = "conflict"


class NotFound(GroveError):
    status = 404
    code = "not_found"


class Forbidden(GroveError):
    status = 403
    code = "forbidden"


class TooLarge(GroveError):
    status = 413
    code = "too_large"
