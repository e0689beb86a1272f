"""The main navigation in real Chromium: one line at 1280 px, its groups open without
JavaScript, and the narrow menu still lists every page."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_the_navigation_fits_one_line_at_1280_px(owner_page, live_server):
    owner_page.set_viewport_size({"width": 1280, "height": 800})
    owner_page.goto(f"{live_server.url}/review/")
    brand = owner_page.locator(".brand").bounding_box()
    sign_out = owner_page.get_by_role("button", name="Sign out").bounding_box()
    assert abs(sign_out["y"] + sign_out["height"] / 2 - (brand["y"] + brand["height"] / 2)) < 8
    assert owner_page.locator("header.top").bounding_box()["height"] < 60
    assert owner_page.locator("#nav-review > summary").get_attribute("class") == "current"


def test_a_group_opens_without_javascript(browser, live_server, db):
    from dashboard.owner import login_path

    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 800}
    )
    page = context.new_page()
    page.goto(live_server.url + login_path())
    page.get_by_role("button", name="Sign in as the owner").click()
    page.wait_for_url(live_server.url + "/")
    assert not page.get_by_role("link", name="Audit log").is_visible()
    page.locator("#nav-memory > summary").click()
    page.get_by_role("link", name="Audit log").click()
    page.wait_for_url(f"{live_server.url}/audit/")
    context.close()


def test_the_narrow_menu_lists_the_grouped_pages(owner_page, live_server):
    owner_page.set_viewport_size({"width": 400, "height": 800})
    owner_page.goto(f"{live_server.url}/")
    owner_page.locator(".menu-button").click()
    owner_page.locator("#nav-agents > summary").click()
    owner_page.get_by_role("link", name="Agent tokens").click()
    owner_page.wait_for_url(f"{live_server.url}/tokens/")
