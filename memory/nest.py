"""Nested verbatim extracts: the write path's hook for memory/extract.py.

write_node(nest=Nest(...)) records the span on the node and calls nest_into inside its
transaction; kept apart from write.py so extract and the write path share it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.errors import Invalid
from memory.models import Edge, EdgeKind, Node


@dataclass(frozen=True)
class Nest:
    """Where an extract sits: its body is parent.body[start:end], word for word."""

    parent: int
    start: int
    end: int

    def as_json(self) -> dict[str, int]:
        return {"parent": self.parent, "start": self.start, "end": self.end}


def nest_into(node: Node, nest: Nest, *, actor: str) -> None:
    """Inside the write's transaction: refuse (Invalid, not_verbatim) unless the new node's body
    is exactly parent.body[start:end], then add the nests edge parent -> node (container ->
    part). An extract is an occurrence of those words in that parent: it is never merged with
    other nodes of the same words (only the tombstone applies)."""
    parent = Node.objects.filter(pk=nest.parent).values_list("body", flat=True).first()
    if parent is None or parent[nest.start : nest.end] != node.body or nest.start < 0:
        raise Invalid(
            f"the extract is not node {nest.parent}'s text from {nest.start} to {nest.end}, "
            "word for word",
            code="not_verbatim",
        )
    Edge.objects.create(
        from_node_id=nest.parent, to_node=node, kind=EdgeKind.NESTS, created_by=actor
    )
