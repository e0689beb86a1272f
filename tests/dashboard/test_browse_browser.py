"""The owner's desk for browsing, in real Chromium: facets, Forgotten and restore, tokens, the
sleep double click, the menu and the theme; and a screenshot of every dashboard page at 1280
and 400 px, light and dark (test-results/screenshots/)."""

from __future__ import annotations

import pytest

from memory.forgetting import let_go
from memory.models import ApiToken, Node, SleepRun
from memory.tokens import hash_secret
from review.ceremony import propose

pytestmark = pytest.mark.browser


def _fits(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.evaluate("window.innerWidth") + 1, page.url


def _child(make_note, parent, body, **fields):
    return make_note(body, origins=[{"id": parent.pk, "relation": "derived_from"}], **fields)


def test_browse_narrows_by_facets_and_pages_without_js(owner_page, live_server, make_note):
    asked = make_note("An agent wants this rooted.", kind="inference")
    plain = make_note("Nobody has looked at this one.")
    propose(asked.pk, actor="agent:scout", reason="it is in three notes")
    owner_page.goto(live_server.url + "/nodes/")
    assert owner_page.locator(f"#node-{plain.pk}").count() == 1
    owner_page.get_by_label("Trust").select_option("proposed")
    owner_page.wait_for_url("**/nodes/?*trust=proposed*")
    owner_page.locator(f"#node-{plain.pk}").wait_for(state="detached")
    assert owner_page.locator("table.nodes tbody tr").count() == 1
    assert owner_page.locator(f"#node-{asked.pk}").is_visible()
    owner_page.get_by_role("link", name="Remove trust proposed").click()
    owner_page.locator(f"#node-{plain.pk}").wait_for()
    owner_page.get_by_label("Kind").select_option("inference")
    owner_page.locator(f"#node-{plain.pk}").wait_for(state="detached")
    assert owner_page.locator(f"#node-{asked.pk}").is_visible()


def test_the_overview_card_leads_to_forgotten_and_restore_brings_it_back(
    owner_page, live_server, make_note, screenshot
):
    gone = make_note("The old tide table for the estuary.", days_old=40)
    let_go(gone.pk, actor="owner")
    owner_page.goto(live_server.url + "/")
    owner_page.locator("#count-decayed a").click()
    owner_page.wait_for_url("**/forgotten/")
    row = owner_page.locator(f"#forgotten-{gone.pk}")
    assert "You let it go" in row.inner_text()
    assert "40 days after it arrived" in row.inner_text()
    row.get_by_role("button", name=f"Restore #{gone.pk}").click()
    owner_page.get_by_text(f"Node #{gone.pk} restored.").wait_for()
    assert owner_page.locator(f"#forgotten-{gone.pk}").count() == 0
    assert Node.objects.get(pk=gone.pk).decayed_at is None


def test_a_token_is_minted_and_its_secret_shown_once(
    owner_page, live_server, make_note, screenshot
):
    owner_page.goto(live_server.url + "/tokens/")
    owner_page.get_by_label("Name").fill("scout")
    owner_page.get_by_label("Domains").fill("personal, work")
    owner_page.get_by_role("button", name="Create token").click()
    secret = owner_page.locator("#token-secret").input_value()
    screenshot(owner_page, "desk-token-minted")
    token = ApiToken.objects.get(name="scout")
    assert token.token_hash == hash_secret(secret)
    assert token.domains == ["personal", "work"]
    owner_page.goto(live_server.url + "/tokens/")
    assert secret not in owner_page.content()
    assert owner_page.locator(f"#token-{token.pk}").is_visible()


@pytest.mark.parametrize("javascript", [True, False])
def test_a_double_click_on_run_sleep_now_queues_one_run(browser, live_server, javascript):
    from dashboard.owner import login_path

    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    page.goto(live_server.url + login_path())
    page.get_by_role("button", name="Sign in as the owner").click()
    page.wait_for_url(live_server.url + "/")
    page.goto(live_server.url + "/sleep/")
    page.get_by_role("button", name="Run sleep now").dblclick()
    page.locator("#run-busy").wait_for()
    assert SleepRun.objects.count() == 1
    assert page.get_by_role("button", name="Run sleep now").is_disabled()
    if not javascript:  # the no-JS page refreshes itself only while a run is going
        assert page.locator("noscript").count() >= 1
    context.close()


def test_the_menu_button_opens_the_nav_on_a_phone(owner_page, live_server):
    owner_page.set_viewport_size({"width": 400, "height": 800})
    owner_page.goto(live_server.url + "/audit/")
    nav_link = owner_page.locator("#main-nav").get_by_role("link", name="Browse")
    assert not nav_link.is_visible()
    owner_page.get_by_text("Menu").click()
    owner_page.locator("#nav-memory > summary").click()  # Browse is in the Memory group
    assert nav_link.is_visible()
    _fits(owner_page)


def test_the_theme_toggle_is_remembered(owner_page, live_server):
    owner_page.goto(live_server.url + "/")
    toggle = owner_page.locator("#theme-toggle")
    toggle.click()  # auto -> light
    toggle.click()  # light -> dark
    assert owner_page.locator("html").get_attribute("data-theme") == "dark"
    owner_page.goto(live_server.url + "/nodes/")
    assert owner_page.locator("html").get_attribute("data-theme") == "dark"
    background = owner_page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(18, 23, 21)"


def _desk(make_note):
    """A small memory with something on every page."""
    from datetime import timedelta

    from django.utils import timezone

    from memory.scroll import commit_turn
    from memory.tokens import create_token
    from review.ceremony import seal

    commit_turn(conversation="kitchen", user="What did the plumber quote?", assistant="1,200 €.")
    seal(make_note("The alarm code is Zebra-4471.").pk, owner="owner")

    hub = make_note("# Kitchen renovation\nThe budget is **5k**; see [[tiles]] and [[#1]].")
    spokes = [
        _child(make_note, hub, f"Quote {i} for tiles, paint and a plumber", days_old=i)
        for i in range(24)
    ]
    for spoke in spokes[:3]:
        _child(make_note, spoke, f"A follow-up on {spoke.pk}: the plumber called back")
    propose(spokes[0].pk, actor="agent:scout", reason="three quotes agree")
    for spoke in spokes[20:23]:
        let_go(spoke.pk, actor="owner")
    create_token(name="scout", domains=["personal"])
    now = timezone.now()
    SleepRun.objects.create(
        status="done",
        requested_by="owner",
        started_at=now - timedelta(minutes=3),
        finished_at=now - timedelta(minutes=2),
        steps={"embed": {"count": 27, "ms": 41.2}, "decay": {"count": 3, "ms": 8.0}},
    )
    return hub, spokes[0]


PAGES = [
    ("overview", "/"),
    ("search", "/search/?q=tiles+plumber"),
    ("search-empty", "/search/"),
    ("browse", "/nodes/"),
    ("forgotten", "/forgotten/"),
    ("node", "/node/{hub}/"),
    ("node-two-rings", "/node/{spoke}/"),
    ("audit", "/audit/"),
    ("audit-arrivals", "/audit/?kind=arrived"),
    ("sleep", "/sleep/?verify=scrolls"),
    ("tokens", "/tokens/"),
    ("not-found", "/no/such/page/"),
]


def test_every_page_at_two_widths_in_both_themes(
    owner_page, live_server, make_note, screenshot, settings, tmp_path
):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    hub, spoke = _desk(make_note)
    for scheme in ("light", "dark"):
        owner_page.emulate_media(color_scheme=scheme)
        for width in (1280, 400):
            owner_page.set_viewport_size({"width": width, "height": 900})
            for name, path in PAGES:
                owner_page.goto(live_server.url + path.format(hub=hub.pk, spoke=spoke.pk))
                if width == 400:
                    _fits(owner_page)
                assert (
                    "Zebra-4471" not in owner_page.content()
                )  # not the digits: a node id may be 4471
                shot = screenshot(owner_page, f"desk-{name}-{width}-{scheme}")
                if width == 400:  # the first screenful, as a phone shows it
                    owner_page.screenshot(path=str(shot.with_name(shot.stem + "-top.png")))
