"""The node picker in real Chromium: typing words suggests nodes, a click fills the number box,
and without JavaScript the number box alone still feeds a question."""

from __future__ import annotations

import pytest

from memory.models import Edge
from memory.questions import plant_question
from review.ceremony import seal

pytestmark = pytest.mark.browser


@pytest.fixture
def question(make_note):
    topic = make_note("The gutter overflows in storms.")
    return plant_question("Who clears the gutter?", about=[topic.pk], signature="owner", owner=True)


def test_typing_words_suggests_a_node_and_a_click_fills_the_box(
    owner_page, live_server, make_note, question
):
    clue = make_note("Leaves block the downpipe every November.")
    hidden = make_note("Leaves also hide the spare key, sealed.")
    seal(hidden.pk, owner="owner")
    owner_page.goto(f"{live_server.url}/review/questions/{question.pk}/")
    owner_page.locator("#feed-node-q").press_sequentially("downpipe leaves")
    owner_page.locator(f"#feed-node-picks button[data-pick='{clue.pk}']").click()
    assert owner_page.get_by_label("A node that bears on it (number)").input_value() == str(clue.pk)
    assert owner_page.locator(f"#feed-node-picks button[data-pick='{hidden.pk}']").count() == 0
    owner_page.get_by_role("button", name="Feed").click()
    assert "Leaves block" in owner_page.locator("#q-feeds").inner_text()
    assert Edge.objects.filter(from_node=clue, to_node=question).exists()


def test_without_javascript_the_number_box_alone_feeds(browser, live_server, make_note, question):
    from dashboard.owner import login_path

    clue = make_note("Leaves block the downpipe every November.")
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + login_path())
    page.get_by_role("button", name="Sign in as the owner").click()
    page.wait_for_url(live_server.url + "/")
    page.goto(f"{live_server.url}/review/questions/{question.pk}/")
    assert not page.locator("#feed-node-q").is_visible()
    page.get_by_label("A node that bears on it (number)").fill(str(clue.pk))
    page.get_by_role("button", name="Feed").click()
    assert "Leaves block" in page.locator("#q-feeds").inner_text()
    context.close()
