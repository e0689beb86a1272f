"""Browse, Forgotten, search and the audit log's arrivals, through the Django test client."""

from __future__ import annotations

import re

import pytest

from memory.forgetting import let_go
from memory.models import Event, Node, SleepRun
from review.ceremony import propose, seal, unseal


def _ids(response, prefix: str = "node") -> set[int]:
    return {int(i) for i in re.findall(rf'<tr id="{prefix}-(\d+)"', response.content.decode())}


@pytest.fixture
def mixed(make_note, root_note):
    """One node for each facet value the tests narrow to."""
    plain = make_note("A plain home note.")
    asked = make_note("Proposed by an agent.", kind="inference")
    propose(asked.pk, actor="agent:scout")
    wild = make_note("Heard at the market.", jurisdiction="wild", kind="hearsay", domain="work")
    gone = make_note("Forgotten by now.", days_old=40)
    let_go(gone.pk, actor="owner")
    Node.objects.filter(pk=plain.pk).update(access_count=9)
    return {"plain": plain, "asked": asked, "wild": wild, "gone": gone, "root": root_note}


@pytest.mark.parametrize(
    ("query", "kept", "dropped"),
    [
        ("trust=proposed", "asked", "plain"),
        ("trust=unreviewed", "plain", "asked"),
        ("lifecycle=decayed", "gone", "plain"),
        ("lifecycle=live", "plain", "gone"),
        ("kind=hearsay", "wild", "plain"),
        ("jurisdiction=wild", "wild", "plain"),
        ("domain=work", "wild", "plain"),
        ("permanent=no", "plain", None),
    ],
)
def test_each_facet_narrows_the_list(owner_client, mixed, query, kept, dropped):
    everything = _ids(owner_client.get("/nodes/"))
    assert {n.pk for n in mixed.values()} <= everything
    narrowed = _ids(owner_client.get(f"/nodes/?{query}"))
    assert mixed[kept].pk in narrowed
    if dropped:
        assert mixed[dropped].pk not in narrowed


def test_permanent_lists_promoted_nodes_from_their_events(owner_client, mixed):
    from memory import audit

    Node.objects.filter(pk=mixed["plain"].pk).update(
        permanent=True, permanent_at=mixed["plain"].created_at
    )
    assert _ids(owner_client.get("/nodes/?permanent=yes")) == set()
    audit.record("promoted_permanent", node=mixed["plain"].pk, actor="sleep", reason="reads")
    assert _ids(owner_client.get("/nodes/?permanent=yes")) == {mixed["plain"].pk}


def test_a_node_sealed_then_unsealed_is_unreviewed_again(owner_client, mixed):
    node = mixed["plain"]
    seal(node.pk, owner="owner")
    assert node.pk not in _ids(owner_client.get("/nodes/?trust=unreviewed"))
    assert node.pk in _ids(owner_client.get("/nodes/?trust=sealed"))
    unseal(node.pk, owner="owner")
    assert node.pk in _ids(owner_client.get("/nodes/?trust=unreviewed"))


def test_sealed_rows_show_no_words(owner_client, make_note):
    secret = make_note("The safe code is Zebra-4471.")
    assert "Zebra-4471" in owner_client.get("/nodes/").content.decode()
    seal(secret.pk, owner="owner")
    body = owner_client.get("/nodes/").content.decode()
    assert "Zebra-4471" not in body and f"sealed #{secret.pk}" in body


def test_links_to_lists_what_points_at_a_node(owner_client, mixed, make_note):
    child = make_note("Says more.", origins=[{"id": mixed["plain"].pk, "relation": "derived_from"}])
    assert _ids(owner_client.get(f"/nodes/?links_to={mixed['plain'].pk}")) == {child.pk}


def test_near_lists_neighbours_either_way(owner_client, mixed, make_note, root_note):
    child = make_note("Says more.", origins=[{"id": mixed["plain"].pk, "relation": "derived_from"}])
    assert _ids(owner_client.get(f"/nodes/?near={mixed['plain'].pk}")) == {child.pk, root_note.pk}


def test_most_read_sorts_first_and_pages_on(owner_client, make_note, mixed):
    fillers = [make_note(f"Filler {i}.").pk for i in range(50)]
    Node.objects.filter(pk__in=fillers).update(access_count=1)
    assert mixed["asked"].pk in _ids(owner_client.get("/nodes/?page=2"))
    assert mixed["asked"].pk not in _ids(owner_client.get("/nodes/?sort=most-read&page=2"))
    first = owner_client.get("/nodes/?sort=most-read")
    assert re.search(r'<tr id="node-(\d+)"', first.content.decode()).group(1) == str(
        mixed["plain"].pk
    )
    assert 'rel="next"' in first.content.decode()
    second = _ids(owner_client.get("/nodes/?sort=most-read&page=2"))
    assert second and not second & _ids(first)


def test_listing_counts_no_read(owner_client, mixed):
    before = dict(Node.objects.values_list("pk", "access_count"))
    owner_client.get("/nodes/")
    owner_client.get("/forgotten/")
    assert dict(Node.objects.values_list("pk", "access_count")) == before


@pytest.mark.parametrize("query", ["trust=bogus", "sort=sideways", "links_to=abc", "kind=<b>"])
def test_a_bad_facet_is_a_400_that_says_why(owner_client, query):
    response = owner_client.get(f"/nodes/?{query}")
    assert response.status_code == 400
    assert 'class="error-box"' in response.content.decode()
    assert "<b>" not in response.content.decode()


def test_forgotten_says_when_and_why_in_words_and_restores(owner_client, mixed):
    response = owner_client.get("/forgotten/")
    assert _ids(response, "forgotten") == {mixed["gone"].pk}
    assert "You let it go" in response.content.decode()
    restored = owner_client.post(f"/node/{mixed['gone'].pk}/restore/", {"next": "/forgotten/"})
    assert restored.status_code == 302 and restored["Location"] == "/forgotten/"
    assert Node.objects.get(pk=mixed["gone"].pk).decayed_at is None
    assert _ids(owner_client.get("/forgotten/"), "forgotten") == set()


def test_the_overview_cards_link_into_browse_and_forgotten(owner_client, mixed):
    body = owner_client.get("/").content.decode()
    for href in (
        "/nodes/?lifecycle=live",
        "/forgotten/",
        "/nodes/?permanent=yes",
        "/nodes/?trust=proposed",
    ):
        assert f'href="{href}"' in body


def test_owner_search_defaults_to_both_scopes_and_shows_the_domain(owner_client, mixed):
    body = owner_client.get("/search/?q=market").content.decode()
    assert f'id="result-{mixed["wild"].pk}"' in body
    assert '<span class="tag domain">work</span>' in body
    assert "<mark>market</mark>" in body


def test_search_highlights_escaped_text(owner_client, make_note):
    make_note("Beware <b>bold</b> kitchen tricks.")
    body = owner_client.get("/search/?q=kitchen").content.decode()
    assert "&lt;b&gt;bold&lt;/b&gt;" in body and "<mark>kitchen</mark>" in body


def test_search_pages_on(owner_client, make_note):
    for i in range(25):
        make_note(f"Heron sighting number {i}.")
    first = owner_client.get("/search/?q=heron").content.decode()
    assert first.count('class="result"') == 20 and 'id="search-more"' in first
    second = owner_client.get("/search/?q=heron&page=2").content.decode()
    assert second.count('class="result"') == 25 and 'id="search-more"' not in second


def test_an_empty_query_lists_recent_live_nodes(owner_client, mixed):
    body = owner_client.get("/search/").content.decode()
    assert f'id="recent-{mixed["plain"].pk}"' in body
    assert f'id="recent-{mixed["gone"].pk}"' not in body


def test_the_recent_list_walks_the_store_clock_not_the_live_flag(owner_client, mixed):
    """A store is never ANALYZEd: without statistics SQLite read every live node through
    memory_node_decayed_at and sorted them (100k: 157 ms), where the store clock's index
    stops at the page's end."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if connection.vendor != "sqlite":
        pytest.skip("SQLite's planner, without statistics")
    with CaptureQueriesContext(connection) as queries:
        owner_client.get("/search/")
    (listing,) = [q["sql"] for q in queries.captured_queries if '"head"' in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + listing)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "memory_node_created_at" in plan and "memory_node_decayed_at" not in plan, plan


def test_arrivals_appear_in_the_audit_log_behind_a_filter(owner_client, mixed):
    plain = Event.objects.get(node=mixed["plain"], kind="arrived")
    wild = Event.objects.get(node=mixed["wild"], kind="arrived")
    body = owner_client.get("/audit/?kind=arrived").content.decode()
    assert f'id="event-{plain.pk}"' in body
    assert "Heard at the market." in body
    personal = owner_client.get("/audit/?kind=arrived&domain=personal").content.decode()
    assert f'id="event-{plain.pk}"' in personal and f'id="event-{wild.pk}"' not in personal


def test_reason_codes_read_as_words_in_the_log(owner_client, mixed):
    body = owner_client.get("/audit/?kind=decayed").content.decode()
    assert "you let it go" in body


def test_no_page_run_inline_script_or_style(owner_client, mixed):
    SleepRun.objects.create(status="running", requested_by="owner")
    for path in ("/", "/nodes/", "/forgotten/", "/search/?q=note", f"/node/{mixed['plain'].pk}/",
                 "/audit/", "/sleep/", "/tokens/"):  # fmt: skip
        body = owner_client.get(path).content.decode()
        assert " style=" not in body, path
        assert not re.search(r"<script(?![^>]*\bsrc=)", body), path


def test_the_event_clock_sort_puts_unknown_times_last(owner_client, make_note):
    from datetime import UTC, datetime

    unknown = make_note("No idea when this happened.")
    early = make_note("The wedding.", referent_time=datetime(2021, 6, 1, tzinfo=UTC))
    late = make_note("The move.", referent_time=datetime(2024, 3, 1, tzinfo=UTC))
    body = owner_client.get("/nodes/?sort=event-clock").content.decode()
    order = [int(i) for i in re.findall(r'<tr id="node-(\d+)"', body)]
    assert order.index(late.pk) < order.index(early.pk) < order.index(unknown.pk)


def test_searching_and_opening_a_result_is_not_a_read_and_the_page_says_so(owner_client, make_note):
    note = make_note("A heron on the weir at dawn.")
    body = owner_client.get("/search/?q=heron").content.decode()
    assert f'id="result-{note.pk}"' in body
    assert "opening one is not a read" in body
    assert owner_client.get(f"/node/{note.pk}/").status_code == 200
    note.refresh_from_db()
    assert (note.access_count, note.last_accessed_at) == (0, None)
