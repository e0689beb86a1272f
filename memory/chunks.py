"""Id lists in pieces that each fit one SQL IN list, on either engine."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

# Host parameters per statement: under the 999 of SQLite builds before 3.32, with room for the
# few other parameters a query adds (PostgreSQL allows 65,535).
IN_LIST = 900


def chunks[T](items: Sequence[T], size: int = IN_LIST) -> Iterator[Sequence[T]]:
    """`items` in consecutive pieces of at most `size`, in order."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
