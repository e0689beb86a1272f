"""Select words in a node's body, press Extract: the part becomes a node nested in it (Chromium,
under the Content-Security-Policy)."""

from __future__ import annotations

import pytest

from memory.models import Node

pytestmark = pytest.mark.browser


def test_selecting_words_fills_the_form_and_extracts_them(owner_page, live_server, make_note):
    note = make_note("Café ☕ notes: the boiler 🔥 is serviced in March.")
    owner_page.goto(f"{live_server.url}/node/{note.pk}/")
    owner_page.get_by_text("Words as stored").click()
    # Select "the boiler 🔥 is serviced" inside the body, as a mouse would.
    owner_page.evaluate(
        """() => {
            const text = document.getElementById("node-source").firstChild;
            const at = text.data.indexOf("the boiler");
            const range = document.createRange();
            range.setStart(text, at);
            range.setEnd(text, at + "the boiler 🔥 is serviced".length);
            document.getSelection().removeAllRanges();
            document.getSelection().addRange(range);
        }"""
    )
    start = note.body.index("the boiler")
    end = start + len("the boiler 🔥 is serviced")  # code points: the emoji counts once
    owner_page.wait_for_function("document.getElementById('extract-end').value !== ''")
    assert owner_page.locator("#extract-start").input_value() == str(start)
    assert owner_page.locator("#extract-end").input_value() == str(end)
    owner_page.get_by_role("button", name="Extract").click()
    owner_page.wait_for_url(f"{live_server.url}/node/*/")
    child = Node.objects.get(metadata__extract__parent=note.pk)
    assert child.body == "the boiler 🔥 is serviced"
    assert owner_page.locator("#node-body").inner_text() == child.body
