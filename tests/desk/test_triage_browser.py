"""Triage and history in real Chromium, timed: root five proposals from a queue of 300 where a
near-duplicate is named (at most 8 clicks), the same without JavaScript keeping the filter, and
supersede twice then read the version history with both diffs. The root page and the version
history are shot at 1280 and 400 px, light and dark, into /work/shots/30/ when it exists."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from memory.models import Event, EventKind, Trust
from memory.trust import trust_of
from review.ceremony import propose
from tests._helpers.acts import root_as_owner

pytestmark = pytest.mark.browser

SHOTS = Path("/work/shots/30")
# Fifty everyday words; each memo draws eight, so no two memos are near-duplicates by chance.
_VOCABULARY = (
    "boiler garden passport invoice bicycle kettle window ladder printer router cellar roof "
    "piano library ticket dentist vaccine insurance mortgage recipe lantern compost tulip "
    "harbour violin camera blanket pharmacy railway museum chimney orchard meadow saddle "
    "anchor compass teapot basket mirror pillow carpet hammer wrench candle fountain"
)
WORDS = _VOCABULARY.split()
DOCTOR = "The owner's doctor is Dr. Ana Costa at the Alvalade clinic, every second Tuesday."


@pytest.fixture
def shoot(screenshot):
    """1280 and 400 px, light and dark: into /work/shots/30/ (outside the repo) when it exists,
    else the test artifacts."""

    def take(page, name: str) -> None:
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            for width in (1280, 400):
                page.set_viewport_size({"width": width, "height": 900})
                path = f"{name}-{width}-{scheme}"
                if SHOTS.is_dir():
                    page.screenshot(path=str(SHOTS / f"{path}.png"), full_page=True)
                else:
                    screenshot(page, path)
        page.emulate_media(color_scheme="light")
        page.set_viewport_size({"width": 1280, "height": 900})

    return take


def _queue(make_note, n: int = 300) -> list:
    """`n` proposals of unrelated words, scout's and junk's in turn, except that the second
    scout proposal is a near-duplicate of the first."""
    nodes = []
    for i in range(n):
        words = " ".join(random.Random(i).sample(WORDS, 8))
        body = f"Memo {i}: {words}."
        if i == 2:
            body = nodes[0].body.replace("Memo 0:", "Memo zero:")
        node = make_note(body)
        propose(node.pk, actor="agent:scout" if i % 2 == 0 else "agent:junk")
        nodes.append(node)
    return nodes


class Clicks:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, locator) -> None:
        self.count += 1
        locator.click()


def _root_five(page, base: str, nodes, click: Clicks, *, filtered: bool, on_near=None) -> list[int]:
    """From the queue: open the first, root it, decline its near-duplicate as one, root four
    more; returns the ids rooted in order."""
    scout = [n for i, n in enumerate(nodes) if i % 2 == 0]
    page.goto(f"{base}/review/")
    if filtered:
        click(page.get_by_role("link", name="agent:scout · 150"))
        page.wait_for_url("**agent=agent%3Ascout**")
    first = scout[0]
    click(page.locator(f"#node-{first.pk}").get_by_role("link", name="Review and root"))
    rooted: list[int] = []
    while len(rooted) < 5:
        page.wait_for_selector("#stored-body")
        if filtered:
            assert "agent=agent%3Ascout" in page.url, page.url
            assert "in this filter" in page.locator("#position").inner_text()
        near = page.locator(".desk-near")
        if near.count() and "which you rooted" in near.inner_text():
            assert f"#{first.pk}, which you rooted" in near.inner_text()
            if on_near:
                on_near(page)
            click(page.get_by_role("button", name=f"Decline as duplicate of #{first.pk}"))
            continue
        node_id = int(page.locator("h1").inner_text().split("#")[1])
        page.get_by_label("Your adopting words").fill("Yes, I adopt it.")
        click(page.get_by_role("button", name=f"Root #{node_id}"))
        page.wait_for_load_state()
        rooted.append(node_id)
    return rooted


def test_root_five_from_a_queue_of_300_naming_the_near_duplicate(
    owner_page, live_server, make_note, shoot
):
    nodes = _queue(make_note)
    shooting = []

    def shot(page) -> None:
        began = time.monotonic()
        shoot(page, "root-page")
        shooting.append(time.monotonic() - began)

    click, started = Clicks(), time.monotonic()
    rooted = _root_five(owner_page, live_server.url, nodes, click, filtered=False, on_near=shot)
    took = time.monotonic() - started - sum(shooting)
    print(f"\nroot five of 300 with JavaScript: {click.count} clicks, {took:.1f} s")
    assert click.count <= 8
    assert {trust_of(i) for i in rooted} == {Trust.GROUND}
    assert nodes[2].pk not in rooted and trust_of(nodes[2].pk) == Trust.UNREVIEWED
    declined = Event.objects.get(node=nodes[2], kind=EventKind.DECLINED)
    assert declined.detail["duplicate_of"] == nodes[0].pk


def test_the_same_without_javascript_keeps_the_filter(browser, live_server, make_note):
    from dashboard.owner import login_path

    nodes = _queue(make_note)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + login_path())
    page.get_by_role("button", name="Sign in as the owner").click()
    page.wait_for_url(live_server.url + "/")
    click, started = Clicks(), time.monotonic()
    rooted = _root_five(page, live_server.url, nodes, click, filtered=True)
    took = time.monotonic() - started
    context.close()
    print(f"\nroot five of 300 without JavaScript, filtered: {click.count} clicks, {took:.1f} s")
    assert click.count <= 8
    junk = {n.pk for i, n in enumerate(nodes) if i % 2 == 1}
    assert not junk & set(rooted)
    assert {trust_of(n) for n in junk} == {Trust.PROPOSED}
    assert trust_of(nodes[2].pk) == Trust.UNREVIEWED  # declined as the duplicate it is


def test_supersede_twice_and_read_the_version_history(owner_page, live_server, make_note, shoot):
    first = make_note(DOCTOR)
    root_as_owner(first)
    started = time.monotonic()
    current = first.pk
    for old, new in (("Alvalade", "Campo de Ourique"), ("Ana Costa", "Rui Lopes")):
        owner_page.goto(f"{live_server.url}/node/{current}/")
        owner_page.get_by_role("link", name="Supersede…").click()
        box = owner_page.get_by_label("Corrected text")
        box.fill(box.input_value().strip().replace(old, new))
        owner_page.get_by_role("button", name="Preview").click()
        assert owner_page.locator("#preview-diff del").all_inner_texts() == [old]
        owner_page.get_by_label("Your adopting words").fill(f"Yes: {new}.")
        owner_page.get_by_role("button", name=f"Confirm and supersede #{current}").click()
        owner_page.wait_for_url(f"**/review/{current}/superseded/")
        current = int(owner_page.locator("#superseded-by a").nth(1).inner_text().lstrip("#"))
    owner_page.goto(f"{live_server.url}/node/{first.pk}/")
    owner_page.get_by_role("link", name="Version 1 of 3").click()
    history = owner_page.locator("#versions")
    assert "version 1 of 3" in history.locator("#version-of").inner_text()
    assert history.locator("#diff-2 del").all_inner_texts() == ["Alvalade"]
    assert history.locator("#diff-2 ins").all_inner_texts() == ["Campo de Ourique"]
    assert history.locator("#diff-3 del").all_inner_texts() == ["Ana Costa"]
    assert history.locator("#diff-3 ins").all_inner_texts() == ["Rui Lopes"]
    assert history.locator("#sides-3 ins").all_inner_texts() == ["Rui Lopes"]
    print(f"\nsupersede twice and read the history: {time.monotonic() - started:.1f} s")
    shoot(owner_page, "version-history")
    owner_page.goto(f"{live_server.url}/review/{first.pk}/why/")
    assert "you replaced it with" in owner_page.locator("#why-superseded").inner_text()
