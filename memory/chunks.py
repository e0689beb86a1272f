"""SQL parameters that mean the same on either engine: id lists in pieces that each fit one IN
list, and LIKE patterns that find text as typed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

# Host parameters per statement: under the 999 of SQLite builds before 3.32, with room for the
# few other parameters a query adds (PostgreSQL allows 65,535).
IN_LIST = 900


def chunks[T](items: Sequence[T], size: int = IN_LIST) -> Iterator[Sequence[T]]:
    """`items` in consecutive pieces of at most `size`, in order."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def like_containing(text: str) -> str:
    """A LIKE pattern matching any string that holds `text` as typed: a %, _ or \\ in it is a
    character to find, never a wildcard. Backslash escapes: PostgreSQL's default, SQLite's only
    with ESCAPE '\\'."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
