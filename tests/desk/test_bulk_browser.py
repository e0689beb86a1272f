"""Bulk acts in real Chromium: decline an agent's 100 proposals through the confirmation and
undo them; keep one conversation of the pending decays by its group. Light and dark, 1280 and
400 px (test-results/screenshots/bulk-*.png), and once without JavaScript."""

from __future__ import annotations

import pytest

from memory.models import Event, Node, Trust
from memory.trust import trust_of
from review.ceremony import propose

pytestmark = pytest.mark.browser


def _shots(page, screenshot, name: str) -> None:
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for width in (1280, 400):
            page.set_viewport_size({"width": width, "height": 900})
            screenshot(page, f"bulk-{name}-{width}-{scheme}")
            if width == 400:
                fits = page.evaluate("document.documentElement.scrollWidth <= innerWidth + 2")
                assert fits, f"{name} scrolls sideways at 400 px"
    page.set_viewport_size({"width": 1280, "height": 900})


def _hundred(make_note) -> list[Node]:
    nodes = []
    for i in range(100):
        node = make_note(f"agent:noisy thinks line {i} matters.")
        propose(node.pk, actor="agent:noisy", reason="maybe")
        nodes.append(node)
    return nodes


def _decline_all_and_undo(page, live_server, screenshot) -> None:
    page.goto(f"{live_server.url}/review/?agent=agent:noisy")
    page.locator("#bulk-action").select_option("decline")
    page.get_by_role("button", name="Apply to all 100 from agent:noisy…").click()
    assert "Decline 100 proposals?" in page.locator("h1").inner_text()
    assert "proposed by agent:noisy" in page.locator("#bulk-filter").inner_text()
    assert page.locator("#bulk-list li").count() == 20 and "80 more" in page.content()
    _shots(page, screenshot, "decline-confirm")
    page.get_by_role("button", name="Yes, decline 100").click()
    page.locator("#undo-box").wait_for()
    assert "Declined: 100 nodes." in page.locator(".messages").inner_text()
    _shots(page, screenshot, "decline-done")
    page.locator("#undo-box").get_by_role("button", name="Undo").click()
    page.wait_for_load_state()
    assert "Undone: 100 nodes" in page.locator(".messages").inner_text()


def test_decline_an_agents_100_proposals_see_the_confirmation_undo_it(
    owner_page, live_server, make_note, screenshot
):
    nodes = _hundred(make_note)
    _decline_all_and_undo(owner_page, live_server, screenshot)
    assert {trust_of(n.pk) for n in nodes} == {Trust.PROPOSED}


def test_the_same_without_javascript(browser, live_server, make_note, screenshot):
    from dashboard.owner import login_path

    nodes = _hundred(make_note)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + login_path())
    page.get_by_role("button", name="Sign in as the owner").click()
    page.wait_for_url(live_server.url + "/")
    _decline_all_and_undo(page, live_server, screenshot)
    context.close()
    assert {trust_of(n.pk) for n in nodes} == {Trust.PROPOSED}


def test_keep_one_conversation_of_many_pending_decays(
    owner_page, live_server, lone, make_note, screenshot
):
    sessions = [
        lone(f"conv-{c} session", days_old=40, source=f"conv-{c}#session_1") for c in range(5)
    ]
    turns = {
        s.pk: [
            make_note(f"Turn {i} of {s.source}.", days_old=40, origins=[{"id": s.pk}]).pk
            for i in range(20)
        ]
        for s in sessions
    }
    owner_page.goto(f"{live_server.url}/review/decays/")
    assert "(105)" in owner_page.locator("#horizons").inner_text()
    row = owner_page.locator("#pending-groups tr", has_text="conv-2#session_1")
    assert "20 nodes, none read" in row.inner_text()
    _shots(owner_page, screenshot, "decay-groups")
    row.get_by_role("link", name="Keep all…").click()
    assert "Keep 20 nodes?" in owner_page.locator("h1").inner_text()
    owner_page.get_by_role("button", name="Yes, keep 20").click()
    owner_page.wait_for_load_state()
    kept = set(Event.objects.filter(kind="kept").values_list("node_id", flat=True))
    assert kept == set(turns[sessions[2].pk])
    assert "(85)" in owner_page.locator("#horizons").inner_text()
