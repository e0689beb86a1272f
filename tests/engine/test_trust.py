"""Trust derived from authority events, many nodes at a time (memory/trust.py)."""

from __future__ import annotations

from memory.trust import trust_map
from review.ceremony import propose, seal
from tests._helpers.acts import OWNER, root_as_owner


def test_it_answers_for_exactly_the_nodes_asked(make_note):
    asked, other = make_note("asked about"), make_note("not asked about")
    propose(other.pk, actor="agent:scout")
    assert trust_map([asked.pk]) == {asked.pk: "unreviewed"}


def test_a_sealed_node_does_not_stop_the_others_being_judged(make_note):
    sealed, rooted, proposed = make_note("hidden"), make_note("true"), make_note("maybe")
    seal(sealed.pk, owner=OWNER)
    root_as_owner(rooted)
    propose(proposed.pk, actor="agent:scout")
    assert trust_map([sealed.pk, rooted.pk, proposed.pk]) == {
        sealed.pk: "sealed",
        rooted.pk: "ground",
        proposed.pk: "proposed",
    }


def test_trust_is_answered_for_exactly_the_ids_asked(make_note) -> None:
    asked, other = make_note("Asked about."), make_note("Sealed, not asked about.")
    seal(other.pk, owner="owner")
    assert trust_map([asked.pk]) == {asked.pk: "unreviewed"}
