"""Finding a forgotten turn by a word, in real Chromium, after a sleep let go of a whole LoCoMo
import (2,888 nodes, tests/_helpers/locomo.py): search names the forgotten match, Forgotten's
word search finds the one turn among 2,888, and Restore brings it back with what it holds.
Light and dark, 1280 and 400 px (screenshots forgotten-*), and without JavaScript."""

from __future__ import annotations

import pytest

from memory.models import Node
from tests._helpers import locomo
from tests._helpers.browsing import four_shots, signed_in

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def forgotten(tmp_path_factory, django_db_blocker):
    return locomo.template("forgotten", tmp_path_factory, django_db_blocker)


@pytest.fixture
def at_scale(forgotten, tmp_path, django_db_blocker, transactional_db):
    """This test's copy of the 2,888 nodes, every one let go by the last sleep."""
    yield from locomo.copy_of(forgotten, tmp_path, django_db_blocker)


def _shots(page, screenshot, name: str) -> None:
    four_shots(page, screenshot, f"forgotten-{name}")


def _find_and_restore(page, live_server, screenshot=None) -> Node:
    (turn,) = Node.objects.filter(body__contains="lighthouse")
    page.goto(live_server.url + "/search/?q=lighthouse")
    assert "1 forgotten node also matches" in page.locator(".forgotten-also").inner_text()
    page.get_by_role("link", name="look them up in Forgotten").click()
    page.wait_for_url("**/forgotten/?q=lighthouse")
    assert page.locator("table.forgotten tbody tr").count() == 1
    assert "words: lighthouse" in page.locator(".chips").inner_text()
    row = page.locator(f"#forgotten-{turn.pk}")
    assert "saw the old lighthouse" in row.inner_text() and "never read" in row.inner_text()
    if screenshot:
        _shots(page, screenshot, "search")
    row.get_by_role("button", name=f"Restore #{turn.pk}").click()
    page.get_by_text(f"Node #{turn.pk} restored.").wait_for()
    page.goto(live_server.url + "/search/?q=lighthouse")
    assert page.locator(".forgotten-also").count() == 0
    assert "saw the old lighthouse" in page.locator("main").inner_text()
    return turn


def _live() -> set[int]:
    return set(Node.objects.filter(decayed_at__isnull=True).values_list("id", flat=True))


def test_a_forgotten_turn_is_found_by_a_word_among_2888_and_restored(
    at_scale, browser, live_server, screenshot
):
    assert not _live()
    page = signed_in(browser, live_server, javascript=True)
    page.goto(live_server.url + "/forgotten/")
    assert page.get_by_role("link", name="older ›").is_visible()
    turn = _find_and_restore(page, live_server, screenshot)
    session = turn.out_edges.get(kind="derived_from").to_node_id
    assert _live() == {turn.pk, session}


def test_the_same_without_javascript(at_scale, browser, live_server):
    turn = _find_and_restore(signed_in(browser, live_server, javascript=False), live_server)
    session = turn.out_edges.get(kind="derived_from").to_node_id
    assert _live() == {turn.pk, session}
