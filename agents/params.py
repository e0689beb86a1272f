"""What the agents send, checked: each helper refuses a bad value with Invalid (400) naming the
field, so every operation in agents/operations.py reads its input the same way; check_text also
screens the MCP door's raw lines (agents/mcp_server.py) for text that cannot be text. The rules
for text, whole numbers and ids are memory/inputs.py's, shared with the dashboard's door."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memory import inputs
from memory.clocks import parse_instant
from memory.errors import Invalid
from memory.visibility import SCOPES


def check_text(value: Any) -> None:
    """Refuse (Invalid, bad_text) any string, nested at any depth, that is not storable text:
    a NUL or a lone surrogate (memory/inputs.py holds the rule for every door)."""
    inputs.screen_text(value)


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
    """A whole number in [low, high] (memory/inputs.whole_number), or `default` when absent."""
    if value is None or value == "":
        return default
    return inputs.whole_number(value, name=name, low=low, high=high)


def optional_text(data: Mapping[str, Any], name: str, *, default: str = "") -> str:
    """A text field that may be absent or null; false, 0, [] or {} is refused, not emptied."""
    return inputs.optional_text(data, name, default=default)


def mapping(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A JSON object field that may be absent or null (then {}); any other type is refused."""
    value = data.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid(f"{name} must be an object", code="bad_field")
    return value


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
