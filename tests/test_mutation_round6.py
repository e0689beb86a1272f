"""Behaviours that round 6's whole-module, one-child mutation runs found no test pinned (issue
16, docs/mutation.md "Round 6"). Each test is named for the behaviour it holds; real SQLite, no
browser and no worker."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from dashboard.browse import browse
from memory import reach
from memory.forgetting import _created_at, let_go, restore
from memory.packets import EXCERPT_CHARS
from memory.read import read
from memory.recall import recall
from memory.sleep import decay as decay_module
from memory.sleep.decay import _sweep, decay
from tests._helpers.nodes import chain, is_decayed


def test_a_decayed_node_past_every_candidate_and_holder_does_not_break_the_mark(make_note, lone):
    # The mark's masks are sized by the candidates and the holders; a decayed node may sit
    # just past them (reach.marks 56: `decayed <= size` indexed one past the mask).
    old = make_note("Old and unread.", days_old=400)
    lone("Young, no edges.")
    past = lone("Young, no edges, let go.")
    let_go(past.pk, actor="owner")
    cutoff = timezone.now() - timedelta(days=14)
    src, _, _ = reach.holding_edges(cutoff)
    holders = int(src.max()) if len(src) else 0
    assert past.pk == max(old.pk, holders) + 2  # the fixture reaches the mask's edge

    found = reach.mark(cutoff)

    assert old.pk in found.garbage.tolist()
    assert past.pk not in found.candidates.tolist()


def test_a_batch_flagged_again_still_spares_what_was_restored_or_newly_held_since_the_mark(
    make_note, lone
):
    # A read holder in the batch sends the sweep down its second pass (the batch flagged again
    # without what the holder holds); that pass re-checks as the first does (decay._sweep 33, 34).
    origin = lone("Held by a holder read since the mark.", days_old=40)
    holder = make_note("Derived from it.", days_old=40, origins=[{"id": origin.pk}])
    restored = lone("Let go and restored since the mark.", days_old=40)
    cited = lone("Cited by a note written since the mark.", days_old=40)
    cutoff = timezone.now() - timedelta(days=14)
    found = reach.mark(cutoff)
    batch = [origin.pk, holder.pk, restored.pk, cited.pk]
    assert set(batch) <= set(found.garbage.tolist())
    since = timezone.now() - timedelta(seconds=1)
    read(holder.pk, actor="agent:scout")
    let_go(restored.pk, actor="owner")
    restore(restored.pk, actor="owner")
    make_note("New, citing it.", origins=[{"id": cited.pk, "relation": "cites"}])

    done, spared = _sweep(
        batch, cutoff=cutoff, since=since, edge_mark=found.edge_mark, edges=found.edges
    )

    assert done == [] and spared >= {holder.pk, origin.pk}
    assert not any(is_decayed(node) for node in (origin, holder, restored, cited))


def test_creation_times_are_read_for_every_id_however_many(lone):
    node = lone("The last of many ids.")
    missing = [10**9 + i for i in range(1800)]  # two chunks of 900 before it
    assert _created_at([*missing, node.pk]) == {node.pk: node.created_at}


# A body cut inside a run of spaces: its first EXCERPT_CHARS + 1 characters fold to fewer than
# EXCERPT_CHARS, and the excerpt must still say that it is cut (packets.preview_rows 61 showed
# that only the folded length decided).
CUT_IN_SPACES = "heron " + "x" * (EXCERPT_CHARS - 7) + " " * 8 + "and the rest of it."


def test_a_recall_excerpt_cut_inside_a_run_of_spaces_says_it_is_cut(make_note):
    make_note(CUT_IN_SPACES)
    (found,) = recall("heron")
    assert found["excerpt"] == CUT_IN_SPACES[: EXCERPT_CHARS - 1] + "…"


@pytest.mark.parametrize(
    ("body", "excerpt"),
    [
        ("heron " + "x" * (EXCERPT_CHARS - 6), None),  # fits exactly: whole, no ellipsis
        ("heron " + "x" * (EXCERPT_CHARS - 5), "cut"),  # one over
        # one over once its two spaces fold, and the body's last character is all that follows
        ("heron " + "x" * (EXCERPT_CHARS - 7) + "  y", "cut"),
    ],
)
def test_a_recall_excerpt_is_cut_exactly_past_its_bound(make_note, body, excerpt):
    make_note(body)
    (found,) = recall("heron")
    folded = " ".join(body.split())
    assert found["excerpt"] == (folded if excerpt is None else folded[: EXCERPT_CHARS - 1] + "…")


def test_a_browse_excerpt_cut_inside_a_run_of_spaces_says_it_is_cut(make_note):
    node = make_note(CUT_IN_SPACES)
    (row,) = [r for r in browse({}).rows if r["id"] == node.pk]
    assert row["title"].endswith("…")
    assert row["title"] == CUT_IN_SPACES[: EXCERPT_CHARS - 1] + "…"


def test_what_a_spared_holder_holds_stays_spared_past_a_batch_that_spares_nothing(
    make_note, lone, monkeypatch
):
    # One node a batch, holders first: g, r, then k (read since the mark: spared with p, which
    # it holds), then q (spares nothing), then p. The spared set carries across batches
    # (decay.decay 55 kept only the last batch's).
    p, k, g = chain(make_note, lone)
    q = lone("Another old page.", days_old=40)
    r = make_note("Derived from it.", days_old=40, origins=[{"id": q.pk}])
    real_mark = reach.mark

    def mark_then_read(cutoff):
        found = real_mark(cutoff)
        order = reach.holders_first(found.garbage, found.edges)
        assert order == [g.pk, r.pk, k.pk, q.pk, p.pk]  # the fixture's batches, in order
        read(k.pk, actor="agent:scout")
        return found

    monkeypatch.setattr(reach, "mark", mark_then_read)
    monkeypatch.setattr(decay_module, "BATCH", 1)

    assert decay()["count"] == 3
    assert [is_decayed(n) for n in (g, r, k, q, p)] == [True, True, False, True, False]
