"""Chromium as the owner: a page signed in through the one-time login link, with or without
JavaScript, and the four screenshots (light and dark, 1280 and 400 px) a page is looked at in."""

from __future__ import annotations


def signed_in(browser, live_server, *, javascript: bool):
    from dashboard.owner import login_path

    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    page.goto(live_server.url + login_path())
    page.get_by_role("button", name="Sign in as the owner").click()
    page.wait_for_url(live_server.url + "/")
    return page


def four_shots(page, screenshot, name: str) -> None:
    """Screenshots of the page as it is, light and dark at 1280 and 400 px; at 400 px it must
    not scroll sideways. Leaves the page light at 1280 px."""
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for width in (1280, 400):
            page.set_viewport_size({"width": width, "height": 900})
            screenshot(page, f"{name}-{width}-{scheme}")
            if width == 400:
                fits = page.evaluate("document.documentElement.scrollWidth <= innerWidth + 2")
                assert fits, f"{name} scrolls sideways at 400 px"
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 1280, "height": 900})
