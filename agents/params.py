"""What the agents send, checked: each helper refuses a bad value with Invalid (400) naming the
field, so every operation in agents/operations.py reads its input the same way; check_text also
screens the MCP door's raw lines (agents/mcp_server.py) for text that cannot be text."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memory.clocks import parse_instant
from memory.errors import Invalid
from memory.visibility import SCOPES


def check_text(value: Any) -> None:
    """Refuse (Invalid, bad_text) any string, key or value, nested at any depth, that UTF-8
    cannot encode (a lone surrogate such as "\\ud800" in JSON): it could be neither hashed,
    stored nor answered. Iterative, so nesting depth costs no recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise Invalid(
                    "text holds a lone surrogate (an unpaired \\ud800-\\udfff escape), "
                    "which is not Unicode text",
                    code="bad_text",
                ) from None
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def check_fields(
    data: Mapping[str, Any], *, allowed: frozenset[str], required: tuple[str, ...]
) -> None:
    if unknown := sorted(set(data) - allowed):
        raise Invalid(
            f"unknown field(s): {', '.join(unknown)}; expected: {', '.join(sorted(allowed))}",
            code="unknown_field",
        )
    if missing := [name for name in required if data.get(name) in (None, "")]:
        raise Invalid(f"missing field(s): {', '.join(missing)}", code="missing_field")


def text(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise Invalid(f"{name} must be text", code="bad_field")
    return value


def integer(value: Any, *, name: str, low: int, high: int, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise Invalid(f"{name} must be an integer", code="bad_field") from None
    if not low <= number <= high:
        raise Invalid(f"{name} must be between {low} and {high}", code="bad_field")
    return number


def flag(value: Any, *, name: str) -> bool:
    """A yes/no parameter: true/false, 1/0 (query strings), or a JSON boolean."""
    if value is None or value == "" or value is False or value in ("0", "false"):
        return False
    if value is True or value in ("1", "true"):
        return True
    raise Invalid(f"{name} must be true or false", code="bad_field")


def scope(value: Any) -> str:
    chosen = value or "home"
    if chosen not in SCOPES:
        raise Invalid(f"scope must be one of {', '.join(SCOPES)}", code="bad_scope")
    return chosen


def as_of(value: Any) -> datetime | None:
    return parse_instant(value, field="as_of")


def domains_param(value: Any) -> list[str] | None:
    """domain as a list, a comma-separated string, or absent."""
    if value in (None, "", []):
        return None
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Invalid("domain must be a label or a list of labels", code="bad_domain")
    return [v.strip() for v in value if v.strip()]
