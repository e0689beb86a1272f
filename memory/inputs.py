"""What every door reads, parsed one way: text, whole numbers and node ids.

The agents' API and MCP server (agents/params.py), the dashboard's and the desk's forms and filters
(web/screen.py, dashboard/, review/) all parse through here, so a value refused at one door is
refused at every door, with the same code. It lives in the engine because every layer may import
the engine and nothing else is shared by all of them.

- Text is Unicode that both engines can store: no lone surrogate (UTF-8 cannot encode it) and no
  NUL (PostgreSQL refuses it in text, so a SQLite memory holding one could never move).
- A whole number is a JSON integer (never a boolean, never a float, 1.0 included) or a string of
  ASCII digits: str.isdigit() says yes to "²", which int() refuses, and int() reads "٣" as 3, so
  neither is asked. Digits are counted before converting, so no length costs time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory.errors import Invalid
from memory.visibility import MAX_ID

MAX_DIGITS = 19  # past 2**63 - 1 nothing fits either engine's integer column


def bad_text_reason(value: str) -> str | None:
    """Why `value` cannot be stored as text on both engines, or None when it can."""
    if "\x00" in value:
        return "text holds a NUL character (\\u0000), which no text column may store"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return (
            "text holds a lone surrogate (an unpaired \\ud800-\\udfff escape), "
            "which is not Unicode text"
        )
    return None


def screen_text(value: Any) -> None:
    """Refuse (Invalid, bad_text) any string, key or value, nested at any depth, that is not
    storable text (bad_text_reason). Iterative, so nesting depth costs no recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if (reason := bad_text_reason(item)) is not None:
                raise Invalid(reason, code="bad_text")
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def ascii_digits(raw: str) -> bool:
    """True for a non-empty run of ASCII digits short enough to be an integer column's value."""
    return 0 < len(raw) <= MAX_DIGITS and raw.isascii() and raw.isdigit()


def whole_number(value: Any, *, name: str, low: int, high: int, code: str = "bad_field") -> int:
    """A JSON integer or a string of ASCII digits within [low, high]. Refuses (Invalid, code)
    booleans, floats, other digits, signs, spaces and anything out of range."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and ascii_digits(value):
        number = int(value)
    else:
        raise Invalid(f"{name} must be an integer", code=code)
    if not low <= number <= high:
        raise Invalid(f"{name} must be between {low} and {high}", code=code)
    return number


def node_id(value: Any, *, name: str, code: str = "bad_field") -> int:
    """A node id: a whole number from 1 to MAX_ID (the largest either engine can hold).
    Refuses (Invalid, code) anything else, naming the value (shortened)."""
    try:
        return whole_number(value, name=name, low=1, high=MAX_ID, code=code)
    except Invalid:
        raise Invalid(f"{name} {value!r:.40} is not a node id", code=code) from None


def any_whole_number(value: Any) -> int | None:
    """The integer a JSON integer or an ASCII digit string names, however large (up to
    Python's conversion limit), or None: for lookups where a number past every id is simply
    not found, rather than refused."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 4300:
        return int(value)
    return None


def typed_node_id(raw: str) -> int | None:
    """The node id a form or filter typed (ASCII digits, 1 to MAX_ID), or None for anything
    else: for the controls that ignore or refuse a non-id in their own words."""
    return int(raw) if ascii_digits(raw) and 0 < int(raw) <= MAX_ID else None


def node_ids(raw: str, *, name: str, code: str = "bad_ids") -> list[int]:
    """Node ids typed as "12, #40 7", in order, without repeats. Refuses (Invalid) an empty
    list and any part that is not a node id."""
    parts = raw.replace(",", " ").replace("#", " ").split()
    if not parts:
        raise Invalid(f"give {name} as node numbers, e.g. 12, 40", code=code)
    return list(dict.fromkeys(node_id(part, name=name, code=code) for part in parts))


def optional_text(data: Mapping[str, Any], name: str, *, default: str = "") -> str:
    """A text field that may be absent or null (then `default`); any other type is refused
    (Invalid, bad_field): false, 0, [] and {} are not empty text."""
    value = data.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise Invalid(f"{name} must be text", code="bad_field")
    screen_text(value)
    return value or default
