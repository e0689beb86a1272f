"""Packets (memory/packets.py): the previews recall, walk and the pages show. The excerpt is the
body with its whitespace folded, cut at its bound with an ellipsis; a packet's fields come in
order, its score to six places."""

from __future__ import annotations

from memory.recall import recall


def test_a_long_body_is_previewed_cut_with_an_ellipsis(make_note) -> None:
    from memory.packets import EXCERPT_CHARS

    make_note("heron " * 60)  # 360 characters
    (packet,) = recall("heron")
    assert len(packet["excerpt"]) == EXCERPT_CHARS and packet["excerpt"].endswith("…")
