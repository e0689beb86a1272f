"""Behaviours that round 6's whole-module, one-child mutation runs found no test pinned (issue
16, docs/mutation.md "Round 6"). Each test is named for the behaviour it holds; real SQLite, no
browser and no worker."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memory.sleep import reach
from memory.sleep.decay import let_go
from tests.test_decay import lone  # noqa: F401  (a fixture)


def test_a_decayed_node_past_every_candidate_and_holder_does_not_break_the_mark(make_note, lone):
    # The mark's masks are sized by the candidates and the holders; a decayed node may sit
    # just past them (reach.marks 56: `decayed <= size` indexed one past the mask).
    old = make_note("Old and unread.", days_old=400)
    lone("Young, no edges.")
    past = lone("Young, no edges, let go.")
    let_go(past.pk, actor="owner")
    src, _, _ = reach.holding_edges()
    assert past.pk == max(old.pk, int(src.max())) + 2  # the fixture reaches the mask's edge

    found = reach.mark(timezone.now() - timedelta(days=150))

    assert old.pk in found.garbage.tolist()
    assert past.pk not in found.candidates.tolist()
