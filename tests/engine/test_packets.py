"""Packets (memory/packets.py): the previews recall, walk and the pages show. The excerpt is the
body with its whitespace folded, cut at its bound with an ellipsis; a packet's fields come in
order, its score to six places."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.browse import browse
from memory.packets import EXCERPT_CHARS, excerpt_of, packet
from memory.recall import recall


def test_a_long_body_is_previewed_cut_with_an_ellipsis(make_note) -> None:
    make_note("heron " * 60)  # 360 characters
    (packet,) = recall("heron")
    assert len(packet["excerpt"]) == EXCERPT_CHARS and packet["excerpt"].endswith("…")


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


def test_an_excerpt_folds_whitespace_and_cuts_past_its_bound_with_an_ellipsis():
    assert excerpt_of(" a\n\tb  c ") == "a b c"
    whole = "x" * EXCERPT_CHARS
    assert excerpt_of(whole) == whole
    cut = "y" * (EXCERPT_CHARS - 2) + " zz"  # the cut falls after a space, which goes
    assert excerpt_of(cut) == "y" * (EXCERPT_CHARS - 2) + "…"
    assert excerpt_of(whole + "x") == "x" * (EXCERPT_CHARS - 1) + "…"


def test_a_packet_is_the_preview_in_its_order_with_the_score_to_six_places():
    row = {"jurisdiction": "home", "id": 7, "kind": "note", "body": "A  body.", "source": "s"}
    row |= {"signature": "owner", "more": False}
    found = packet(row, trust="ground", score=np.float32(0.5) / 3)
    assert list(found.items()) == [
        ("jurisdiction", "home"),
        ("id", 7),
        ("trust", "ground"),
        ("kind", "note"),
        ("excerpt", "A body."),
        ("source", "s"),
        ("score", 0.166667),
    ]
    assert "score" not in packet(row, trust="ground")
