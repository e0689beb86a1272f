"""Raw SQL goes through Django's cursor with %s placeholders, so it also works while queries
are logged (GROVE_DEBUG, assertNumQueries): a '?' placeholder breaks Django's query logger.

Every page, fragment and act of the dashboard and the review screens is walked from the URL
patterns themselves with queries logged, so a new page cannot miss the walk."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import URLPattern, reverse

from dashboard.graph import neighbourhood
from dashboard.owner import login_path
from dashboard.urls import urlpatterns as dashboard_urls
from dashboard.views import feed_key
from memory.models import Event
from memory.recall import recall
from memory.walk import around, open_walk
from review.urls import urlpatterns as review_urls
from tests._helpers.acts import root_as_owner, supersede_as_owner


def test_recall_walk_and_the_graph_work_with_query_logging_on(make_note, root_note):
    note = make_note("Quokkas sleep in the shade at noon.", referent_time="2024-01-01T00:00:00Z")
    with CaptureQueriesContext(connection) as queries:
        assert [p["id"] for p in recall("quokkas shade", scope="both", domains=["personal"])] == [
            note.pk
        ]
        ticket = open_walk(root_note.pk, holder="agent:a", domains=["personal"])
        assert note.pk in [r["target"] for r in around(ticket, holder="agent:a")["routes"]]
        assert neighbourhood(note.pk, as_of=note.created_at) is not None
    index = "body_tsv" if connection.vendor == "postgresql" else "memory_node_fts"
    assert any(index in q["sql"] for q in queries.captured_queries)


def _names(patterns: list) -> list[str]:
    return [p.name for p in patterns if isinstance(p, URLPattern) and p.name]


# Acts (POST only): each answers an htmx post with its row or status fragment, a plain post with
# a redirect. Which node each act and page is walked on (default: a ground node).
ACTS = {
    "restore_node",
    "run_sleep_now",
    "decay_keep",
    "review_seal",
    "review_unseal",
    "review_decline",
}
NODE_FOR = {
    "restore_node": "decayed",
    "decay_keep": "stale",
    "decay_let_go": "stale",
    "review_superseded": "superseded",
    "review_decline": "proposed",
    "review_reject": "stale",
    "decay_undo": "decayed",
}
QUERY = {"search": {"q": "quokkas"}, "audit_log": {"kind": "rooted"}}
HTMX = {"HX-Request": "true", "HX-Target": "audit-rows"}
# Documented redirects: signing out goes to the sign-in page. Everything else answers 200.
REDIRECTS = {"logout": "login", "decays_release": "pending_decays"}
# Acts that always land on a page (no row to swap): a post answers with a redirect.
PAGE_ACTS = {
    "node_extract",
    "decay_let_go",  # behind a confirmation page: a confirmed post lands on the list
    "review_reject",
    "review_bulk",
    "decay_undo",
    "batch_undo",  # lands where the owner was, with what it undid
    "decay_bulk",  # behind a confirmation page: a post without an act lands on the list
    "question_plant",
    "question_feed",
    "question_answer",
    "question_reopen",
    "drift_keep",  # a refusal or a done, then back to the drift list
    "create_token",  # shows the new secret once, on the page that minted it (200)
    "change_token",  # back to the tokens page, which says what changed
}
PAGE_ACT_STATUS = {"create_token": 200}


@pytest.fixture
def memory(make_note, stale_note) -> dict[str, int]:
    """One node in each state the pages branch on."""
    from memory.forgetting import let_go
    from memory.questions import plant_question
    from review.ceremony import propose, seal

    ground = make_note("Quokkas sleep in the shade at noon.")
    root_as_owner(ground)
    old = make_note("Quokkas once slept in the sun.")
    root_as_owner(old)
    supersede_as_owner(old, "Quokkas sleep in the shade, not the sun.")
    sealed = make_note("A sealed quokka secret.")
    seal(sealed.pk, owner="owner")
    decayed = make_note("A forgotten quokka.", days_old=30)
    let_go(decayed.pk, actor="owner")
    proposed = make_note("A quokka an agent wants rooted.")
    propose(proposed.pk, actor="agent:scout")
    question = plant_question("Where do quokkas nap?", about=[ground.pk], signature="owner")
    return {
        "proposed": proposed.pk,
        "question": question.pk,
        "ground": ground.pk,
        "superseded": old.pk,
        "sealed": sealed.pk,
        "decayed": decayed.pk,
        "stale": stale_note.pk,
        "decayed_event": Event.objects.get(node=decayed, kind="decayed").pk,
    }


def _url(name: str, memory: dict[str, int]) -> str:
    pattern = next(p for p in dashboard_urls + review_urls if p.name == name)
    converters = pattern.pattern.converters  # type: ignore[attr-defined]  # a RoutePattern
    kwargs = {"node_id": memory[NODE_FOR.get(name, "ground")]} if "node_id" in converters else {}
    if "question_id" in converters:
        kwargs["question_id"] = memory["question"]
    if "batch" in converters:
        kwargs["batch"] = "0" * 16
    if "name" in converters:
        kwargs["name"] = "walker"
    if "key" in converters:
        kwargs["key"] = feed_key()
    return reverse(name, kwargs=kwargs)


@pytest.mark.parametrize(
    "name", sorted(set(_names(dashboard_urls + review_urls)) - ACTS - PAGE_ACTS)
)
def test_every_page_and_fragment_answers_with_queries_logged(owner_client, memory, name):
    url = login_path() if name == "login_link" else _url(name, memory)
    with CaptureQueriesContext(connection) as queries:
        if name in REDIRECTS:
            response = owner_client.post(url)
            assert response.status_code == 302
            assert urlsplit(response["Location"]).path == reverse(REDIRECTS[name])
            return
        plain = owner_client.get(url, QUERY.get(name, {}))
        fragment = owner_client.get(url, QUERY.get(name, {}), headers=HTMX)
    assert (plain.status_code, fragment.status_code) == (200, 200)
    assert queries.captured_queries  # the logger saw the page's SQL


@pytest.mark.parametrize("name", sorted(ACTS))
def test_every_act_answers_with_queries_logged(owner_client, memory, name):
    url = _url(name, memory)
    data = {"reason": "walked", "event": memory["decayed_event"]}  # restore swaps that row
    with CaptureQueriesContext(connection):
        fragment = owner_client.post(url, data, headers=HTMX)
        plain = owner_client.post(url, data)
    assert (fragment.status_code, plain.status_code) == (200, 302)


@pytest.mark.parametrize("name", sorted(PAGE_ACTS))
def test_every_page_act_answers_with_queries_logged(owner_client, memory, name):
    with CaptureQueriesContext(connection):
        data = {"start": "0", "end": "4", "node": memory["ground"], "about": memory["ground"]}
        data |= {"confirmed": "yes", "reason": "walked", "name": "walker", "domains": "personal"}
        response = owner_client.post(_url(name, memory), {**data, "body": "Do quokkas swim?"})
    assert response.status_code == PAGE_ACT_STATUS.get(name, 302)


def test_the_walk_covers_every_route_of_the_dashboard_and_review():
    names = set(_names(dashboard_urls + review_urls))
    assert names >= ACTS | PAGE_ACTS and set(NODE_FOR) <= names and set(QUERY) <= names
    assert len(names) == len(_names(dashboard_urls + review_urls))  # no name stands twice
