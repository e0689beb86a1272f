"""Bulk acts in real Chromium at the scale of a LoCoMo import (2,888 nodes, tests/_helpers/
locomo.py, built once per session and copied per test): keep one conversation of 2,888 pending
decays that sleep's guard held back, through its groups; decline an agent's 100 proposals
through the confirmation and undo them. Light and dark, 1280 and 400 px (screenshots bulk-*),
and without JavaScript."""

from __future__ import annotations

import pytest

from memory.forgetting import pending_ids
from memory.models import Event, Node, Trust
from memory.sleep.run import run_sleep
from memory.trust import trust_of
from memory.write import write_node
from review.ceremony import propose
from tests._helpers import locomo
from tests._helpers.browsing import four_shots, signed_in

pytestmark = pytest.mark.browser

KEPT = "conv-30"  # 19 sessions, 369 turns


@pytest.fixture(scope="module")
def held(tmp_path_factory, django_db_blocker):
    return locomo.template("held", tmp_path_factory, django_db_blocker)


@pytest.fixture
def at_scale(held, tmp_path, django_db_blocker, transactional_db):
    """This test's copy of the 2,888 nodes, all pending, held back by the last sleep."""
    yield from locomo.copy_of(held, tmp_path, django_db_blocker)


def _shots(page, screenshot, name: str) -> None:
    four_shots(page, screenshot, f"bulk-{name}")


def _keep_one_conversation(page, live_server, screenshot=None) -> int:
    page.goto(f"{live_server.url}/review/decays/")
    held = page.locator("#held-back").inner_text()
    assert "Sleep held back 2,888 decays (100% of live)" in held
    assert "next sleep (2,888)" in page.locator("#horizons").inner_text()
    assert page.locator("#pending-groups tbody tr").count() == 50
    if screenshot:
        _shots(page, screenshot, "decay-groups")
    page.get_by_label("Domain").fill(KEPT)
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(f"**domain={KEPT}**")
    domains = page.locator("#pending-groups tbody tr .tag").all_inner_texts()
    assert len(domains) > 19 and set(domains) == {KEPT}
    page.get_by_role("link", name="Keep all of these…").click()
    count = sum(sessions + turns for sid, sessions, turns in locomo.SHAPE if sid == KEPT)
    assert f"Keep {count} nodes?" in page.locator("h1").inner_text()
    assert f"in domain {KEPT}" in page.locator("#bulk-filter").inner_text()
    assert page.locator("#bulk-list li").count() == 20
    if screenshot:
        _shots(page, screenshot, "keep-confirm")
    page.get_by_role("button", name=f"Yes, keep {count}").click()
    page.locator(".messages").get_by_text(f"Keep: {count} nodes.").wait_for()
    assert "Nothing pending matches." in page.locator("#pending-groups").inner_text()
    page.get_by_role("link", name="Clear filters").click()
    assert f"next sleep ({locomo.NODES - count:,})" in page.locator("#horizons").inner_text()
    return count


def _conversation(sample_id: str) -> set[int]:
    return set(Node.objects.filter(domain=sample_id).values_list("id", flat=True))


def test_keep_one_conversation_of_2888_held_back_decays_then_release_the_rest(
    at_scale, browser, live_server, screenshot
):
    page = signed_in(browser, live_server, javascript=True)
    rest = locomo.NODES - _keep_one_conversation(page, live_server, screenshot)
    kept = set(Event.objects.filter(kind="kept").values_list("node_id", flat=True))
    assert kept == _conversation(KEPT)
    everything = set(Node.objects.values_list("id", flat=True))
    assert set(pending_ids()[0]) == everything - kept
    page.get_by_role("button", name=f"Release {rest:,} to the next sleep").click()
    page.locator(".messages").get_by_text(f"Released {rest:,} decays").wait_for()
    run_sleep(requested_by="test")
    live = set(Node.objects.filter(decayed_at__isnull=True).values_list("id", flat=True))
    assert live == kept


def test_keep_one_conversation_without_javascript(at_scale, browser, live_server):
    page = signed_in(browser, live_server, javascript=False)
    _keep_one_conversation(page, live_server)
    kept = set(Event.objects.filter(kind="kept").values_list("node_id", flat=True))
    assert kept == _conversation(KEPT)
    everything = set(Node.objects.values_list("id", flat=True))
    assert set(pending_ids()[0]) == everything - kept


def _hundred_proposals() -> list[int]:
    """An agent's noise on the import: 100 notes on turns of one conversation, each proposed."""
    turns = Node.objects.filter(domain="conv-42", kind="utterance").order_by("id")[:100]
    ids = []
    for i, turn in enumerate(turns):
        node = write_node(
            body=f"noisy thinks line {i} of this turn matters.",
            kind="note",
            jurisdiction="home",
            signature="noisy",
            domain="conv-42",
            origins=[{"id": turn.pk, "relation": "derived_from"}],
            actor="agent:noisy",
        ).node
        propose(node.pk, actor="agent:noisy", reason="maybe")
        ids.append(node.pk)
    return ids


def _decline_all_and_undo(page, live_server, screenshot=None) -> None:
    page.goto(f"{live_server.url}/review/?agent=agent:noisy")
    page.locator("#bulk-action").select_option("decline")
    page.get_by_role("button", name="Apply to all 100 from agent:noisy…").click()
    assert "Decline 100 proposals?" in page.locator("h1").inner_text()
    assert "every proposal from agent:noisy" in page.locator("#bulk-filter").inner_text()
    assert page.locator("#bulk-list li").count() == 20 and "80 more" in page.content()
    if screenshot:
        _shots(page, screenshot, "decline-confirm")
    page.get_by_role("button", name="Yes, decline 100").click()
    page.locator("#undo-box").wait_for()
    assert "Declined: 100 nodes." in page.locator(".messages").inner_text()
    if screenshot:
        _shots(page, screenshot, "decline-done")
        page.set_viewport_size({"width": 400, "height": 900})
        undo = page.locator("#undo-box").get_by_role("button", name="Undo").bounding_box()
        one_line = page.get_by_role("button", name="Filter").bounding_box()
        assert undo["height"] <= one_line["height"] + 1, "Undo wraps at 400 px"
        page.set_viewport_size({"width": 1280, "height": 900})
    page.locator("#undo-box").get_by_role("button", name="Undo").click()
    page.locator(".messages").get_by_text("Undone: 100 nodes").wait_for()
    page.goto(f"{live_server.url}/review/?agent=agent:noisy")
    assert page.get_by_role("button", name="Apply to all 100 from agent:noisy…").is_visible()


def test_decline_an_agents_100_proposals_see_the_confirmation_undo_it(
    at_scale, browser, live_server, screenshot
):
    proposals = _hundred_proposals()
    _decline_all_and_undo(signed_in(browser, live_server, javascript=True), live_server, screenshot)
    assert {trust_of(pk) for pk in proposals} == {Trust.PROPOSED}
    declines = Event.objects.filter(kind="declined", node_id__in=proposals)
    assert declines.count() == 100 and len({e.detail["batch"] for e in declines}) == 1


def test_decline_and_undo_without_javascript(at_scale, browser, live_server):
    proposals = _hundred_proposals()
    _decline_all_and_undo(signed_in(browser, live_server, javascript=False), live_server)
    assert {trust_of(pk) for pk in proposals} == {Trust.PROPOSED}
