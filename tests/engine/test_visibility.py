"""Visibility (memory/visibility.py): which node a caller may see, and as of when. Scope and
domains, liveness as of an instant, trust filters, the id range a node may have, lookups cut into
chunks of ids, and the vector mask. The paths that apply these rules: test_visibility_matrix.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.errors import NotFound
from memory.forgetting import let_go, restore
from memory.models import Node
from memory.trust import trust_map
from memory.visibility import MAX_ID, lawful_trust, live_at, node_in_domains, visible_ids
from review.ceremony import seal


def _copy_at(node: Node, pk: int) -> Node:
    """A copy of a node stored at an id of our choosing (the write path always takes the next).
    Made last in a test: after the top id SQLite's AUTOINCREMENT has no next id."""
    fields = {f.attname: getattr(node, f.attname) for f in Node._meta.concrete_fields}
    copy = Node(**{**fields, "id": pk})
    copy.save(force_insert=True)
    return copy


def test_the_highest_id_sqlite_holds_still_names_a_node(make_note) -> None:
    top = _copy_at(make_note("Stored at the very top of the id range."), MAX_ID)
    assert visible_ids([MAX_ID], domains=None) == {MAX_ID}
    assert node_in_domains(MAX_ID).pk == top.pk


def test_an_id_below_one_names_no_node_even_one_stored_there(make_note) -> None:
    _copy_at(make_note("Stored at id zero by hand."), 0)
    assert visible_ids([0], domains=None) == set()
    with pytest.raises(NotFound):
        node_in_domains(0)


# Ids no test node reaches: 1,799 of them put the next id past the first two chunks of 900,
# where a chunk loop stepping by one (start 0 to 899) no longer reaches.
FAR = [10**9 + i for i in range(1799)]


def test_liveness_trust_and_hiding_are_answered_past_two_chunks_of_ids(make_note) -> None:
    live, sealed = make_note("Live, the 1,800th id asked for."), make_note("Sealed, the last.")
    seal(sealed.pk, owner="owner")
    later = datetime.now(UTC) + timedelta(days=1)
    for as_of in (None, later):
        assert live_at([*FAR, live.pk], as_of=as_of) == {live.pk}
        assert sealed.pk not in lawful_trust(
            [*FAR, sealed.pk], as_of=as_of, include_superseded=True
        )
    assert trust_map([*FAR, sealed.pk])[sealed.pk] == "sealed"


def test_a_node_restored_after_its_decay_was_live_as_of_an_instant_after(make_note) -> None:
    node = make_note("Let go, then brought back.")
    let_go(node.pk, actor="owner")
    restore(node.pk, actor="owner")
    later = datetime.now(UTC) + timedelta(seconds=1)
    assert live_at([node.pk], as_of=later) == {node.pk}
