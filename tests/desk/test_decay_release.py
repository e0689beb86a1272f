"""The guard's pages: the overview and the sleep page say what sleep held back and link to the
pending page, which lets the owner release it (review/decay_views.py)."""

from __future__ import annotations

import pytest

from memory.models import Event, EventKind
from memory.sleep.run import run_sleep
from tests._helpers.nodes import is_decayed


@pytest.fixture
def held(lone, settings):
    """Twelve old pages nobody reads, and a sleep whose guard held all of them back."""
    settings.GROVE_DECAY_GUARD_FLOOR = 5
    pages = [lone(f"An old page, number {i}.", days_old=40) for i in range(12)]
    run_sleep(only_step="decay", requested_by="test")
    assert not any(is_decayed(p) for p in pages)
    return pages


def test_the_overview_says_sleep_held_back_and_links_to_review(owner_client, held):
    body = owner_client.get("/").content.decode()
    assert "Sleep held back 12 decays (92% of live):" in body
    assert '<a href="/review/decays/">review</a>' in body


def test_the_sleep_page_says_it_too(owner_client, held):
    assert "Sleep held back 12 decays" in owner_client.get("/sleep/").content.decode()


def test_the_owner_releases_them_on_the_pending_page_and_the_next_sleep_collects(
    owner_client, held
):
    page = owner_client.get("/review/decays/").content.decode()
    assert "Release all 12 to the next sleep" in page
    response = owner_client.post("/review/decays/release/")
    assert response["Location"] == "/review/decays/"
    (event,) = Event.objects.filter(kind=EventKind.DECAYS_RELEASED)
    assert (event.actor, event.detail["count"]) == ("owner", 12)
    assert "Sleep held back" not in owner_client.get("/").content.decode()
    run_sleep(only_step="decay", requested_by="test")
    assert all(is_decayed(p) for p in held)


def test_releasing_is_a_post_only(owner_client, held):
    assert owner_client.get("/review/decays/release/").status_code == 405
    assert not Event.objects.filter(kind=EventKind.DECAYS_RELEASED).exists()


def test_releasing_nothing_says_so_and_records_nothing(owner_client, db):
    response = owner_client.post("/review/decays/release/", follow=True)
    assert "Nothing was released: sleep held nothing back" in response.content.decode()
    assert not Event.objects.filter(kind=EventKind.DECAYS_RELEASED).exists()


def test_after_keeping_some_the_release_says_and_records_only_what_is_still_pending(
    owner_client, held
):
    owner_client.post(f"/review/decays/{held[0].pk}/keep/")
    page = owner_client.get("/review/decays/").content.decode()
    assert "Sleep held back 12 decays" in page and "Release 11 to the next sleep" in page
    done = owner_client.post("/review/decays/release/", follow=True).content.decode()
    assert "Released 11 decays: the next sleep collects them." in done
    (event,) = Event.objects.filter(kind=EventKind.DECAYS_RELEASED)
    assert (event.detail["count"], event.detail["held_back"]) == (11, 12)
