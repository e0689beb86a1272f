"""The Content-Security-Policy allows only this origin, and every page still works under it in
real Chromium: no refused script or style, htmx swaps, the admin loads (issue 12)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_every_page_answers_with_a_self_only_policy(owner_client, root_note):
    for path in ("/", "/search/?q=seed", f"/node/{root_note.pk}/", "/audit/", "/admin/"):
        policy = owner_client.get(path)["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "unsafe-inline" not in policy, path


def test_the_pages_run_under_the_policy_without_a_refusal(owner_page, live_server, make_note):
    note = make_note("A note to look at under the policy.")
    refused: list[str] = []
    owner_page.on(
        "console",
        lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None,
    )
    owner_page.goto(live_server.url + "/")
    # htmx swaps the pending-decay count in on load: scripts run under the policy.
    owner_page.locator("#pending-slot").filter(has_not_text="counting").wait_for()
    owner_page.goto(live_server.url + "/search/")
    owner_page.get_by_label("Query").fill("policy")
    owner_page.get_by_label("Query").press("Enter")
    owner_page.locator("#results").get_by_text("A note to look at").first.wait_for()
    for path in (f"/node/{note.pk}/", "/audit/", "/admin/"):
        owner_page.goto(live_server.url + path)
    assert refused == []
