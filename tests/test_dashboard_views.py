from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from memory.decay import let_go
from memory.models import Event, Node, SleepRun
from review.ceremony import propose, root, seal

PAGES = ["/", "/search/", "/audit/", "/sleep/", "/sleep/status/"]


@pytest.mark.parametrize("path", PAGES)
def test_each_page_redirects_to_login_when_signed_out(client, db, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_the_node_page_and_exports_redirect_to_login_when_signed_out(client, make_note):
    node = make_note("Private.")
    for path in (f"/node/{node.pk}/", "/audit/export.csv", "/audit/export.json"):
        assert client.get(path).status_code == 302


@pytest.mark.parametrize("path", PAGES)
def test_each_page_answers_the_owner(owner_client, make_note, path):
    make_note("Something to count.")
    assert owner_client.get(path).status_code == 200


# --- overview -----------------------------------------------------------------------------


def test_it_counts_trust_from_authority_events(owner_client, make_note):
    proposed, rooted, sealed = (make_note(f"Trust case {i}.") for i in range(3))
    propose(proposed.pk, actor="agent:scout", reason="seen twice")
    root(rooted.pk, adopting_words="I adopt this.", expected_body_hash=rooted.body_hash,
         owner="owner")
    seal(sealed.pk, owner="owner")
    trusts = owner_client.get("/").context["trusts"]
    assert (trusts["proposed"], trusts["ground"], trusts["sealed"]) == (1, 1, 1)
    assert trusts["unreviewed"] == Node.objects.count() - 3


def test_it_draws_the_90_day_chart(owner_client, make_note):
    make_note("Arrived today.")
    body = owner_client.get("/").content.decode()
    assert '<svg class="chart"' in body
    assert "arrived (2)" in body  # the root note and this one


def test_it_links_into_queues_that_have_something_waiting(owner_client, make_note):
    assert 'id="queue-proposed"' not in owner_client.get("/").content.decode()
    propose(make_note("Waiting for the owner.").pk, actor="agent:scout")
    body = owner_client.get("/").content.decode()
    assert 'id="queue-proposed"' in body
    assert "1 proposed for rooting" in body


def test_it_says_not_scheduled_without_a_schedule(owner_client, db):
    assert "not scheduled" in owner_client.get("/").content.decode()


def test_it_shows_the_next_scheduled_sleep(owner_client, db):
    from memory.sleep import ensure_schedule

    schedule = ensure_schedule(cron="30 3 * * *")
    body = owner_client.get("/").content.decode()
    assert "not scheduled" not in body
    assert schedule.next_run.strftime("%Y-%m-%d %H:%M") in body


# --- search -------------------------------------------------------------------------------


def test_it_searches_and_labels_previews(owner_client, make_note):
    node = make_note("The heron nests by the mill pond.")
    response = owner_client.get("/search/", {"q": "heron", "scope": "home"})
    assert [r["id"] for r in response.context["results"]] == [node.pk]
    body = response.content.decode()
    assert 'class="tag jur-home"' in body and 'class="tag trust-unreviewed"' in body
    assert f'href="/node/{node.pk}/"' in body


def test_search_does_not_count_a_read(owner_client, make_note):
    node = make_note("Kingfishers dive for minnows.")
    owner_client.get("/search/", {"q": "kingfishers"})
    node.refresh_from_db()
    assert node.access_count == 0


def test_search_scope_filters_jurisdiction(owner_client, make_note):
    make_note("Otters in the river, seen at dawn.", jurisdiction="wild", kind="hearsay")
    assert owner_client.get("/search/", {"q": "otters", "scope": "wild"}).context["results"]
    assert owner_client.get("/search/", {"q": "otters", "scope": "home"}).context["results"] == []


def test_search_domain_filter(owner_client, make_note):
    make_note("Garden snails eat hostas.", domain="garden")
    assert owner_client.get("/search/", {"q": "snails", "domain": "garden"}).context["results"]
    assert owner_client.get("/search/", {"q": "snails", "domain": "work"}).context["results"] == []


def test_search_as_of_before_and_after_a_decay(owner_client, make_note):
    node = make_note("The swifts return in May.", days_old=2)
    let_go(node.pk, actor="owner")
    # A naive datetime-local value is read as UTC: an hour before the decay.
    then = (timezone.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    past = owner_client.get("/search/", {"q": "swifts", "as_of": then})
    assert [r["id"] for r in past.context["results"]] == [node.pk]
    assert 'class="asof-banner"' in past.content.decode()
    assert owner_client.get("/search/", {"q": "swifts"}).context["results"] == []


def test_search_refuses_a_bad_as_of_clearly(owner_client, db):
    response = owner_client.get("/search/", {"q": "x", "as_of": "yesterday-ish"})
    assert response.status_code == 200
    assert "is not a date and time" in response.content.decode()
