"""The browsing pages in real Chromium against the live server; each saves a screenshot."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.forgetting import let_go
from memory.models import Node, SleepRun
from review.ceremony import propose

pytestmark = pytest.mark.browser

HOSTILE = [
    "<script>alert('x')</script> a script tag in a body",
    '<img src=x onerror="alert(1)"> an event handler attribute',
    "x" * 3000,
    "\u202eRTL override \u200f mark \u2067isolate and more words after it",
]


def _fits(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.evaluate("window.innerWidth") + 4


def _child(make_note, parent, body, **fields):
    return make_note(body, origins=[{"id": parent.pk, "relation": "derived_from"}], **fields)


def test_the_overview_draws_its_chart(owner_page, live_server, make_note, screenshot):
    for days in (1, 3, 3, 10, 40):
        make_note(f"Arrived {days} days ago, one of several.", days_old=days)
    let_go(make_note("Decays today.", days_old=20).pk, actor="owner")
    propose(make_note("Please root me.").pk, actor="agent:scout")
    owner_page.goto(live_server.url + "/")
    chart = owner_page.locator("svg.chart")
    assert chart.get_attribute("aria-label").startswith("Nodes arrived and decayed per day")
    assert chart.locator("rect").count() > 5
    assert owner_page.locator("#queue-proposed").inner_text() == "1 proposed for rooting"
    _fits(owner_page)
    screenshot(owner_page, "dashboard-overview")


def test_search_and_open_a_result_counts_no_read(owner_page, live_server, make_note, screenshot):
    node = make_note("The heron waits by the weir at dusk.")
    make_note(
        "Herons are patient hunters, says the field guide.", jurisdiction="wild", kind="hearsay"
    )
    owner_page.goto(live_server.url + "/search/")
    owner_page.get_by_label("Query").fill("heron weir")
    owner_page.get_by_label("both").check()
    owner_page.get_by_role("button", name="Search").click()
    result = owner_page.locator(f"#result-{node.pk}")
    result.wait_for()
    assert "home" in result.locator(".result-tags").inner_text()
    assert "unreviewed" in result.locator(".result-tags").inner_text()
    screenshot(owner_page, "dashboard-search")
    assert Node.objects.get(pk=node.pk).access_count == 0
    result.locator("a.open").click()
    owner_page.wait_for_url(f"**/node/{node.pk}/")
    owner_page.locator("#held-by").wait_for()  # the page is there, and says what holds it
    assert Node.objects.get(pk=node.pk).access_count == 0  # inspection is not use


def test_the_node_page_draws_and_walks_the_neighbourhood(
    owner_page, live_server, make_note, screenshot
):
    centre = make_note("The centre of attention.")
    leaves = [_child(make_note, centre, f"Leaf number {i} says something.") for i in range(5)]
    owner_page.goto(live_server.url + f"/node/{centre.pk}/")
    assert owner_page.locator("#node-body").inner_text() == "The centre of attention."
    graph = owner_page.locator("svg.graph")
    assert graph.locator("a.gnode").count() == 7  # centre, 5 leaves, the root note
    screenshot(owner_page, "dashboard-node")
    graph.locator(f"#gnode-{leaves[2].pk}").click()
    owner_page.wait_for_url(f"**/node/{leaves[2].pk}/")
    assert "Leaf number 2" in owner_page.locator("#node-body").inner_text()


def test_a_narrow_screen_lists_the_neighbourhood_instead_of_drawing_it(
    owner_page, live_server, make_note, screenshot
):
    centre = make_note("The centre of attention.")
    leaf = _child(make_note, centre, "A leaf on a phone.")
    owner_page.set_viewport_size({"width": 400, "height": 900})
    owner_page.goto(live_server.url + f"/node/{centre.pk}/")
    assert not owner_page.locator("figure.graph-box > svg.graph").is_visible()
    listing = owner_page.locator("#graph-list")
    assert listing.is_visible()
    _fits(owner_page)
    screenshot(owner_page, "dashboard-node-narrow")
    listing.get_by_role("link", name="A leaf on a phone.").click()
    owner_page.wait_for_url(f"**/node/{leaf.pk}/")
    owner_page.set_viewport_size({"width": 1280, "height": 900})
    assert owner_page.locator("figure.graph-box > svg.graph").is_visible()
    assert not owner_page.locator("#graph-list").is_visible()


def test_the_audit_log_filters_and_restores(owner_page, live_server, make_note, screenshot):
    gone = make_note("Gone but on the record.", days_old=30)
    let_go(gone.pk, actor="owner")
    propose(make_note("A proposal, not a decay.").pk, actor="agent:scout")
    owner_page.goto(live_server.url + "/audit/")
    owner_page.get_by_label("Kind").select_option("decayed")
    owner_page.get_by_role("button", name="Filter").click()
    owner_page.wait_for_url("**/audit/?kind=decayed*")
    rows = owner_page.locator("table.audit tbody tr")
    assert rows.count() == 1
    assert "Gone but on the record." in rows.first.inner_text()
    screenshot(owner_page, "dashboard-audit")
    rows.first.get_by_role("button", name=f"Restore #{gone.pk}").click()
    owner_page.locator("table.audit").get_by_text("live again").wait_for()
    assert Node.objects.get(pk=gone.pk).decayed_at is None
    screenshot(owner_page, "dashboard-audit-restored")


@pytest.mark.worker
def test_run_sleep_now_finishes_on_the_real_worker(
    owner_page, live_server, qcluster, make_note, screenshot
):
    make_note("Something for sleep to embed.")
    owner_page.goto(live_server.url + "/sleep/")
    owner_page.get_by_role("button", name="Run sleep now").click()
    run = owner_page.locator("#sleep-status tbody tr").first
    run.locator(".tag", has_text="done").wait_for(timeout=60_000)
    assert owner_page.locator("#sleep-status").get_attribute("data-active") == "false"
    assert SleepRun.objects.get().status == "done"
    assert "embed" in run.inner_text()
    screenshot(owner_page, "dashboard-sleep")


def test_time_travel_before_and_after_a_decay(owner_page, live_server, make_note, screenshot):
    node = make_note("The swifts return in the first week of May.", days_old=5)
    let_go(node.pk, actor="owner")
    then = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    owner_page.goto(live_server.url + "/search/?q=swifts&scope=home")
    assert owner_page.locator(f"#result-{node.pk}").count() == 0
    owner_page.get_by_label("As of (UTC; empty = now)").fill(then)
    owner_page.get_by_role("button", name="Search").click()
    owner_page.locator(f"#result-{node.pk}").wait_for()
    assert owner_page.locator(".asof-banner").is_visible()
    screenshot(owner_page, "dashboard-timetravel-search")
    owner_page.locator(f"#result-{node.pk} a.open").click()
    owner_page.wait_for_url(f"**/node/{node.pk}/?as_of=*")
    assert owner_page.locator("#node-lifecycle").inner_text() == "live"
    assert owner_page.locator(".asof-banner").is_visible()
    screenshot(owner_page, "dashboard-timetravel-node")
    owner_page.goto(live_server.url + f"/node/{node.pk}/")
    assert owner_page.locator("#node-lifecycle").inner_text() == "decayed"


def test_hostile_bodies_render_as_text(owner_page, live_server, make_note, screenshot):
    dialogs: list[str] = []
    owner_page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    centre = make_note("Hostile neighbourhood " + HOSTILE[0])
    nodes = [_child(make_note, centre, body + " hostile") for body in HOSTILE]
    for node in nodes[:2]:
        let_go(node.pk, actor="owner")
    pages = [
        "/",
        "/search/?q=hostile&scope=both",
        f"/node/{centre.pk}/",
        f"/node/{nodes[2].pk}/",
        f"/node/{nodes[3].pk}/?decayed=1",
        "/audit/",
    ]
    for i, path in enumerate(pages):
        owner_page.goto(live_server.url + path)
        _fits(owner_page)
        screenshot(owner_page, f"dashboard-hostile-{i}")
    owner_page.goto(live_server.url + f"/node/{nodes[3].pk}/")
    assert "\u202eRTL override" in owner_page.locator("#node-body").inner_text()
    owner_page.goto(live_server.url + f"/node/{centre.pk}/")
    assert "<script>" in owner_page.locator("#node-body").inner_text()
    assert dialogs == []
