"""Finding a forgotten turn by a word, in real Chromium: search names the forgotten matches,
Forgotten's word search finds the turn, and Restore brings it back; at 400 px too."""

from __future__ import annotations

import pytest

from memory.forgetting import let_go
from memory.models import Node

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 400])
def test_a_forgotten_turn_is_found_by_a_word_and_restored(
    owner_page, live_server, make_note, width
):
    owner_page.set_viewport_size({"width": width, "height": 900})
    turn = make_note("Caroline: the lighthouse storm kept us up.", source="conv-26#D3:1")
    other = make_note("Melanie: we took the boat out.", source="conv-26#D3:2")
    for node in (turn, other):
        let_go(node.pk, actor="owner")
    owner_page.goto(live_server.url + "/search/?q=lighthouse")
    owner_page.get_by_role("link", name="look them up in Forgotten").click()
    owner_page.wait_for_url("**/forgotten/?q=lighthouse")
    assert owner_page.locator(f"#forgotten-{other.pk}").count() == 0
    row = owner_page.locator(f"#forgotten-{turn.pk}")
    assert "You let it go" in row.inner_text()
    assert owner_page.evaluate("document.documentElement.scrollWidth") <= width + 1
    row.get_by_role("button", name=f"Restore #{turn.pk}").click()
    owner_page.get_by_text(f"Node #{turn.pk} restored.").wait_for()
    assert Node.objects.get(pk=turn.pk).decayed_at is None
    assert Node.objects.get(pk=other.pk).decayed_at is not None
