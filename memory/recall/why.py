"""Why recall placed each node: short tags while ranking (the lists a node came from, the edge
or entity that brought it), joined into one bounded line for the packet's `why`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memory.recall.lexical import matched_terms, selective_terms
from memory.visibility import Visibility

WHY_CHARS = 160


class Explained(Protocol):
    id: int
    why: list[str]


def explain(ranked: Sequence[Explained], terms: Sequence[str], vis: Visibility) -> dict[int, str]:
    """Each node's reasons as one line of at most WHY_CHARS characters; "words" becomes the
    query words its body holds (as the word index sees them) among those scored for `vis`."""
    matched = matched_terms([r.id for r in ranked], selective_terms(terms, vis) or terms)
    lines = {}
    for r in ranked:
        parts = [
            ("words: " + ", ".join(matched[r.id])) if part == "words" and r.id in matched else part
            for part in r.why
        ]
        line = "; ".join(parts) or "related"
        lines[r.id] = line if len(line) <= WHY_CHARS else line[: WHY_CHARS - 1] + "…"
    return lines


def reasons(
    node_id: int,
    lists: dict[str, dict[int, float]],
    notes: dict[str, str],
    via: dict[int, tuple[int, str]],
    *,
    signer: bool,
    entity: tuple[int, str] | None = None,
) -> list[str]:
    """Short tags for why a node ranks: the lists it came from, the edge it came through."""
    tags = []
    for name, hits in lists.items():
        if node_id not in hits:
            continue
        if name == "vector":
            tags.append(f"vector {hits[node_id]:.2f}")
        elif name == "date":
            tags.append("date named")
        elif notes.get(name):
            tags.append(f"{name}: {notes[name]}")
        else:
            tags.append(name)
    if node_id in via:
        seed, kind = via[node_id]
        tags.append(f"via #{seed} ({kind})")
    if entity is not None:
        tags.append(f"entity: {entity[1]}")
    if signer:
        tags.append("speaker named")
    return tags
