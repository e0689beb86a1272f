"""Nested verbatim extracts, as in the Forest design: a span of a node's words, made a node.

extract(parent, start, end) writes a child whose body is exactly parent.body[start:end] (the span
trimmed of surrounding whitespace first, since the write path strips it), in the parent's
domain and jurisdiction, derived_from the parent, with a `nests` edge parent -> child
(container -> part). The write path enforces the verbatim rule (nest.nest_into), integrity
re-checks it on every nests edge (integrity.nests_not_verbatim), and the walk routes over nests
go deeper (to the part) and shallower (to the container).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memory import inputs
from memory.errors import Invalid
from memory.models import ApiToken, EdgeKind, Kind
from memory.read import visible_node
from memory.visibility import MAX_ID, Visibility
from memory.write import Nest, WriteResult, write_node

# A pair's words live on its scroll; a part of one is a note (a pair needs a scroll pointer).
_PART_KIND: dict[str, str] = {Kind.PAIR.value: Kind.NOTE.value}


def _offset(value: Any, *, name: str) -> int:
    return inputs.whole_number(value, name=name, low=0, high=MAX_ID, code="bad_span")


def trimmed_span(body: str, start: Any, end: Any) -> tuple[int, int]:
    """(start, end) checked against the body (0 <= start < end <= len) and trimmed of the
    whitespace at both ends. Refuses (Invalid, bad_span) a span out of range or only blank."""
    start, end = _offset(start, name="start"), _offset(end, name="end")
    if not start < end <= len(body):
        raise Invalid(
            f"the span {start}-{end} is not inside the body (0 to {len(body)} characters)",
            code="bad_span",
        )
    while start < end and body[start].isspace():
        start += 1
    while end > start and body[end - 1].isspace():
        end -= 1
    if start == end:
        raise Invalid("the span holds only whitespace", code="bad_span")
    return start, end


def extract(
    parent_id: Any,
    *,
    start: Any,
    end: Any,
    signature: str,
    actor: str | None = None,
    domains: Iterable[str] | None = None,
    token: ApiToken | None = None,
    owner: bool = False,
) -> WriteResult:
    """Write the verbatim part parent.body[start:end] as a child node (see the module docstring).

    Reads the store clock (created_at). Refuses NotFound for a parent the caller may not see
    (outside `domains`, decayed, sealed or rejected), Invalid for a bad span (bad_span) or an
    extract that would not be verbatim (not_verbatim), Conflict for words the owner rejected.
    `owner`: the owner's extract on the dashboard, kept as it arrives (write_node's `owner`).
    """
    if isinstance(parent_id, bool) or not isinstance(parent_id, int) or not 0 < parent_id <= MAX_ID:
        raise Invalid("parent must be a node id", code="bad_field")
    parent, _ = visible_node(
        parent_id, vis=Visibility.of(domains=domains, scope="both", as_of=None)
    )
    start, end = trimmed_span(parent.body, start, end)
    return write_node(
        body=parent.body[start:end],
        kind=_PART_KIND.get(parent.kind, parent.kind),
        jurisdiction=parent.jurisdiction,
        signature=signature,
        origins=[{"id": parent.pk, "relation": EdgeKind.DERIVED_FROM}],
        source=parent.source,
        domain=parent.domain,
        referent_time=parent.referent_time,
        actor=actor,
        token=token,
        nest=Nest(parent=parent.pk, start=start, end=end),
        owner=owner,
    )
