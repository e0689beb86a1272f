"""Agents the owner sees and governs, in real Chromium: everything one agent did yesterday,
reads and recalls included, exported; a muted agent's proposals waiting aside; a write limit
set on the page and a 429 over real HTTP; a token's MCP snippet copied. Each scenario's time
goes to test-results/agents-timings.txt; screenshots of the agents page and the overview's
"since you last looked" at 1280 and 400 px, light and dark, go to GROVE_SHOTS (if set)."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.utils import timezone

from memory.models import ApiToken
from review.ceremony import propose
from tests._helpers.agents import make_agent, write_note
from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser


@contextmanager
def timed(name: str):
    started = time.perf_counter()
    yield
    took = time.perf_counter() - started
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with (ARTIFACTS / "agents-timings.txt").open("a") as out:
        out.write(f"{name}: {took:.2f} s\n")


def test_find_everything_one_agent_did_yesterday_and_export_it(
    owner_page, live_server, client, make_note
):
    agent = make_agent(client, name="claude-desk")
    with time_machine.travel(timezone.now() - timedelta(days=1)):
        node = make_note("The boiler is serviced in March.")
        agent.get("recall", {"q": "boiler service"})
        agent.get(f"nodes/{node.pk}")
        write_note(agent, node, body="The boiler man is called Rui.", signature="claude-desk")
    agent.get("recall", {"q": "today's question"})
    with timed("find what one agent did yesterday and export it"):
        owner_page.goto(live_server.url + "/audit/")
        owner_page.get_by_label("Actor").fill("claude-desk")
        owner_page.get_by_role("button", name="Filter").click()
        owner_page.get_by_role("link", name="yesterday").click()
        owner_page.wait_for_url("**until=*")
        rows = owner_page.locator("#audit-rows tbody tr")
        text = rows.all_inner_texts()
        assert len(text) == 3, text
        assert any("recalled" in t and "boiler service" in t for t in text)
        assert any(t.startswith(str(timezone.now().date() - timedelta(days=1))) for t in text)
        assert not any("today's question" in t for t in text)
        with owner_page.expect_download() as download:
            owner_page.locator("#export-csv").click()
        exported = Path(download.value.path()).read_text()
    assert exported.count("claude-desk") >= 3 and "boiler service" in exported
    assert "read," in exported and ",token," in exported.splitlines()[0] + ","


def test_mute_an_agent_and_see_its_proposals_wait_aside(owner_page, live_server, client, make_note):
    noisy = make_agent(client, name="noisy")
    for i in range(3):
        propose(make_note(f"Noise number {i}.").pk, actor="agent:noisy", token=noisy.token)
    heard = make_note("A proposal worth a look.")
    propose(heard.pk, actor="agent:scout")
    with timed("mute an agent and see its proposals wait aside"):
        owner_page.goto(live_server.url + "/tokens/")
        owner_page.locator("#govern-noisy summary").click()
        owner_page.locator("#govern-noisy").get_by_label("mute").check()
        owner_page.locator("#govern-save-noisy").click()
        owner_page.get_by_text("Token noisy: muted changed").wait_for()
        owner_page.goto(live_server.url + "/review/")
        aside = owner_page.locator("#queue-muted").inner_text()
        assert "agent:noisy · 3" in aside
        assert owner_page.locator(f"#node-{heard.pk}").count() == 1
        assert "Noise number" not in owner_page.locator("main").inner_text()
    assert ApiToken.objects.get(name="noisy").muted


def test_set_a_rate_limit_and_get_429_over_the_api(owner_page, live_server, client, root_note):
    agent = make_agent(client, name="hasty")

    def write(body: str) -> tuple[int, str | None]:
        data = {
            "body": body,
            "kind": "note",
            "jurisdiction": "home",
            "signature": "hasty",
            "origins": [{"id": root_note.pk, "relation": "derived_from"}],
        }
        request = urllib.request.Request(
            live_server.url + "/api/v1/nodes",
            data=json.dumps(data).encode(),
            method="POST",
            headers={**agent.auth, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request) as answer:
                return answer.status, None
        except urllib.error.HTTPError as refused:
            return refused.code, refused.headers.get("Retry-After")

    with timed("set a rate limit and get 429 over the API"):
        owner_page.goto(live_server.url + "/tokens/")
        owner_page.locator("#govern-hasty summary").click()
        owner_page.locator("#govern-hasty").get_by_label("Writes a minute").fill("2")
        owner_page.locator("#govern-save-hasty").click()
        owner_page.get_by_text("Token hasty: write limit changed").wait_for()
        assert write("first")[0] == 201 and write("second")[0] == 201
        status, retry = write("third")
    assert status == 429 and retry is not None and 1 <= int(retry) <= 60


def test_copy_a_tokens_mcp_snippet(owner_page, live_server, db):
    owner_page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    with timed("mint a token and copy its MCP snippet"):
        owner_page.goto(live_server.url + "/tokens/")
        owner_page.get_by_label("Name").fill("desk")
        owner_page.locator("#create-token").click()
        snippet = owner_page.locator("#snippet-new-mcp-json")
        snippet.get_by_role("button", name="Copy").click()
        snippet.get_by_role("button", name="Copied").wait_for()
        copied = owner_page.evaluate("navigator.clipboard.readText()")
    config = json.loads(copied)["mcpServers"]["grove"]
    assert config["args"][-3:] == ["mcp", "--token", "desk"]


def test_without_javascript_the_secret_and_snippets_are_selectable_text(browser, live_server, db):
    from dashboard.owner import login_path

    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + login_path())
    page.get_by_role("button", name="Sign in as the owner").click()
    page.goto(live_server.url + "/tokens/")
    page.get_by_label("Name").fill("plain")
    page.locator("#create-token").click()
    assert page.locator("#token-secret").input_value().startswith("grv_")
    assert page.get_by_role("button", name="Copy").count() == 0  # hidden without the script
    assert "--token plain" in page.locator("#snippet-text-new-claude-code").input_value()
    context.close()


def test_screenshots_of_the_agents_page_and_since_you_last_looked(
    owner_page, live_server, client, make_note
):
    shots = os.environ.get("GROVE_SHOTS")
    agent = make_agent(client, name="claude-desk")
    node = make_note("The boiler is serviced in March.")
    agent.get("recall", {"q": "boiler service"})
    agent.get(f"nodes/{node.pk}")
    agent.post(f"nodes/{node.pk}/propose")
    for scheme in ("light", "dark"):
        owner_page.emulate_media(color_scheme=scheme)
        for width in (1280, 400):
            owner_page.set_viewport_size({"width": width, "height": 900})
            pages = (("/agents/", "agents"), ("/", "since-you-last-looked"), ("/tokens/", "tokens"))
            for path, name in pages:
                owner_page.goto(live_server.url + path)
                width_seen = owner_page.evaluate("document.documentElement.scrollWidth")
                assert width_seen <= width + 1, (path, width)
                if shots:
                    out = Path(shots) / f"{name}-{width}-{scheme}.png"
                    out.parent.mkdir(parents=True, exist_ok=True)
                    target = owner_page.locator("#since") if path == "/" else owner_page
                    target.screenshot(path=str(out), **({} if path == "/" else {"full_page": True}))
