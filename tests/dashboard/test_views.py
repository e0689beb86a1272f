from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from memory.forgetting import let_go
from memory.models import Event, Node, SleepRun
from review.ceremony import propose, root, seal

PAGES = ["/", "/overview/waiting/", "/search/", "/audit/", "/sleep/", "/sleep/status/"]


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
    root(
        rooted.pk,
        adopting_words="I adopt this.",
        expected_body_hash=rooted.body_hash,
        owner="owner",
    )
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


def test_the_pending_decays_link_arrives_in_its_own_fragment(owner_client, request):
    assert 'id="queue-pending"' not in owner_client.get("/overview/waiting/").content.decode()
    request.getfixturevalue("stale_note")
    body = owner_client.get("/overview/waiting/").content.decode()
    assert 'id="queue-pending"' in body and "1 pending decay" in body
    assert 'hx-get="/overview/waiting/"' in owner_client.get("/").content.decode()


def test_it_says_not_scheduled_without_a_schedule(owner_client, db):
    assert "not scheduled" in owner_client.get("/").content.decode()


def test_it_shows_the_next_scheduled_sleep(owner_client, db):
    from memory.sleep.run import ensure_schedule

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
    assert response.status_code == 400
    assert "is not a date and time" in response.content.decode()


# --- audit log ------------------------------------------------------------------------------


def _decayed(make_note, body: str, **fields) -> Node:
    node = make_note(body, days_old=30, **fields)
    let_go(node.pk, actor="owner")
    return node


def test_the_audit_log_filters_by_kind_and_reason(owner_client, make_note):
    gone = _decayed(make_note, "Let go of this one.")
    propose(make_note("A proposal.").pk, actor="agent:scout")
    rows = owner_client.get("/audit/").context["page"].object_list
    assert {"decayed", "proposed"} <= {e.kind for e in rows}
    rows = owner_client.get("/audit/", {"kind": "decayed", "reason": "owner_let_go"})
    assert [e.node_id for e in rows.context["page"].object_list] == [gone.pk]


def test_the_audit_log_filters_by_actor_domain_and_date(owner_client, make_note):
    garden = _decayed(make_note, "Prune the roses.", domain="garden")
    _decayed(make_note, "Work memo.", domain="work")
    by_domain = owner_client.get("/audit/", {"domain": "garden"}).context["page"].object_list
    assert {e.node_id for e in by_domain} == {garden.pk}
    assert list(owner_client.get("/audit/", {"actor": "owner"}).context["page"].object_list)
    assert not owner_client.get("/audit/", {"actor": "nobody"}).context["page"].object_list
    today = timezone.now().date()
    future = {"since": (today + timedelta(days=1)).isoformat()}
    assert not owner_client.get("/audit/", future).context["page"].object_list
    assert owner_client.get("/audit/", {"until": today.isoformat()}).context["page"].object_list


def test_the_audit_log_refuses_a_bad_filter_clearly(owner_client, db):
    response = owner_client.get("/audit/", {"kind": "exploded"})
    assert response.status_code == 400
    assert "unknown event kind" in response.content.decode()


def test_the_audit_log_paginates_and_keeps_filters(owner_client, make_note):
    for i in range(51):
        propose(make_note(f"Proposal number {i}.").pk, actor="agent:scout")
    response = owner_client.get("/audit/", {"kind": "proposed"})
    assert len(response.context["page"].object_list) == 50
    assert "?kind=proposed&amp;page=2" in response.content.decode()
    second = owner_client.get("/audit/", {"kind": "proposed", "page": 2})
    assert len(second.context["page"].object_list) == 1


def test_a_decay_row_shows_its_snapshot(owner_client, make_note):
    _decayed(make_note, "Snapshot me before I go.")
    body = owner_client.get("/audit/", {"kind": "decayed"}).content.decode()
    assert "Snapshot me before I go." in body
    assert "event clock" in body and "reads" in body


def test_a_sealed_nodes_excerpt_is_hidden_in_the_log(owner_client, make_note):
    node = make_note("Very private words.")
    propose(node.pk, actor="agent:scout")
    seal(node.pk, owner="owner")
    body = owner_client.get("/audit/").content.decode()
    assert "Very private words" not in body
    assert f"sealed #{node.pk}" in body


def test_it_restores_from_the_log_by_plain_post(owner_client, make_note):
    node = _decayed(make_note, "Bring me back.")
    response = owner_client.post(f"/node/{node.pk}/restore/", {"next": "/audit/?kind=decayed"})
    assert response.status_code == 302 and response["Location"] == "/audit/?kind=decayed"
    node.refresh_from_db()
    assert node.decayed_at is None
    assert Event.objects.filter(node=node, kind="restored").count() == 1


def test_it_restores_by_htmx_and_swaps_the_row(owner_client, make_note):
    node = _decayed(make_note, "Swap my row.")
    event = Event.objects.get(node=node, kind="decayed")
    response = owner_client.post(
        f"/node/{node.pk}/restore/", {"event": event.pk}, headers={"HX-Request": "true"}
    )
    body = response.content.decode()
    assert body.lstrip().startswith(f'<tr id="event-{event.pk}"')
    assert "live again" in body and "Restore" not in body


def test_an_htmx_restore_naming_no_event_row_still_restores(owner_client, make_note):
    node = _decayed(make_note, "Bring me back anyway.")
    assert not Event.objects.filter(pk=987654).exists()
    response = owner_client.post(
        f"/node/{node.pk}/restore/", {"event": "987654"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 302  # no row to swap: back to the log, not a server error
    assert Event.objects.filter(node=node, kind="restored").exists()


def test_restoring_a_live_node_is_refused_with_a_message(owner_client, make_note):
    node = make_note("Never decayed.")
    response = owner_client.post(f"/node/{node.pk}/restore/", follow=True)
    assert "nothing to restore" in response.content.decode()
    assert not Event.objects.filter(node=node, kind="restored").exists()


def test_the_csv_export_parses_and_keeps_filters(owner_client, make_note):
    gone = _decayed(make_note, 'Commas, "quotes" and\nnewlines.')
    propose(make_note("Not a decay.").pk, actor="agent:scout")
    response = owner_client.get("/audit/export.csv", {"kind": "decayed"})
    assert response.streaming
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(int(r["node_id"]), r["kind"]) for r in rows] == [(gone.pk, "decayed")]
    assert rows[0]["excerpt"] == 'Commas, "quotes" and\nnewlines.'


def test_the_json_export_parses_and_hides_sealed_excerpts(owner_client, make_note):
    node = make_note("Sealed words stay hidden.")
    seal(node.pk, owner="owner")
    response = owner_client.get("/audit/export.json")
    events = json.loads(b"".join(response.streaming_content))["events"]
    mine = [e for e in events if e["node_id"] == node.pk]
    assert mine and all(e["excerpt"] == "" for e in mine)
    assert "Sealed words" not in json.dumps(events)


# --- sleep --------------------------------------------------------------------------------


def test_the_sleep_page_shows_threshold_and_settings(owner_client, db):
    body = owner_client.get("/sleep/").content.decode()
    assert 'id="promotion-threshold">3 reading days' in body
    assert "younger than 14 days" in body


def test_run_sleep_now_queues_a_run(owner_client, db):
    response = owner_client.post("/sleep/run/")
    assert response.status_code == 302 and response["Location"] == "/sleep/"
    run = SleepRun.objects.get()
    assert (run.status, run.requested_by) == ("queued", "owner")


def test_the_status_fragment_polls_only_while_a_run_is_active(owner_client, db):
    owner_client.post("/sleep/run/", headers={"HX-Request": "true"})
    assert 'hx-trigger="every 1s"' in owner_client.get("/sleep/status/").content.decode()
    SleepRun.objects.update(status="done", finished_at=timezone.now())
    assert "hx-trigger" not in owner_client.get("/sleep/status/").content.decode()


# --- CSRF -----------------------------------------------------------------------------------


def test_every_post_without_a_csrf_token_is_refused(make_note):
    from dashboard.owner import ensure_owner

    node = _decayed(make_note, "CSRF target.")
    client = Client(enforce_csrf_checks=True)
    client.force_login(ensure_owner())
    assert client.post(f"/node/{node.pk}/restore/").status_code == 403
    assert client.post("/sleep/run/").status_code == 403
    node.refresh_from_db()
    assert node.decayed_at is not None and not SleepRun.objects.exists()


def test_gets_only_where_pages_only_read(owner_client, db):
    assert owner_client.post("/search/").status_code == 405
    assert owner_client.post("/audit/").status_code == 405
    assert owner_client.get("/sleep/run/").status_code == 405


def test_the_nav_links_every_page_and_marks_the_current_one(owner_client, db):
    body = owner_client.get("/audit/").content.decode()
    assert '<a href="/audit/" aria-current="page">Audit log</a>' in body
    for href in ("/", "/search/", "/review/", "/review/decays/", "/sleep/", "/tokens/"):
        assert f'<a href="{href}">' in body
