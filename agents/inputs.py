"""Input screening shared by the agents' doors (JSON views and MCP): text that cannot be text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory.errors import Invalid


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
