"""The review queue at scale, without a browser: filters, pages, bulk acts, the two noes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from dashboard.owner import ensure_owner
from memory.models import Event, Node, Trust
from memory.trust import trust_of
from review.ceremony import decline, propose, seal
from tests._helpers.acts import root_as_owner


@pytest.fixture
def junk(make_note):
    """Twelve proposals from one agent and two from another."""
    nodes = []
    for i in range(12):
        node = make_note(f"Junk fact number {i}.")
        propose(node.pk, actor="agent:junk", reason="looked important")
        nodes.append(node)
    for i in range(2):
        node = make_note(f"Useful fact {i}.", domain="work", kind="inference")
        propose(node.pk, actor="agent:scout", reason="seen twice")
        nodes.append(node)
    return nodes


def _rows(response) -> list[int]:
    return [item.node.pk for item in response.context["items"]]


def test_it_filters_by_agent_domain_and_kind(owner_client, junk):
    assert len(_rows(owner_client.get("/review/"))) == 14
    assert _rows(owner_client.get("/review/?agent=agent:scout")) == [n.pk for n in junk[12:]]
    assert _rows(owner_client.get("/review/?domain=work")) == [n.pk for n in junk[12:]]
    assert _rows(owner_client.get("/review/?kind=inference")) == [n.pk for n in junk[12:]]
    assert _rows(owner_client.get("/review/?agent=agent:none")) == []


def test_it_filters_by_age_of_the_proposal(owner_client, junk, time_machine):
    time_machine.move_to(timezone.now() + timedelta(days=10))
    fresh = Node.objects.get(pk=junk[0].pk)
    decline(fresh.pk, owner="owner")
    propose(fresh.pk, actor="agent:junk")
    rows = _rows(owner_client.get("/review/?age=7"))
    assert len(rows) == 13 and fresh.pk not in rows


def test_it_pages_oldest_first_and_says_where_it_is(owner_client, junk, monkeypatch):
    monkeypatch.setattr("review.views.QUEUE_PAGE", 5)
    first = owner_client.get("/review/")
    assert _rows(first) == [n.pk for n in junk[:5]]
    assert "Showing 1–5 of 14, oldest first" in first.content.decode()
    third = owner_client.get("/review/?page=3&agent=agent:junk")
    assert _rows(third) == [n.pk for n in junk[10:12]]
    assert "Page 3 of 3" in third.content.decode()


def test_bulk_decline_of_ticked_rows_keeps_the_nodes(owner_client, junk):
    ids = [junk[0].pk, junk[1].pk]
    response = owner_client.post(
        "/review/bulk/", {"action": "decline", "ids": ids, "confirmed": "yes"}
    )
    assert response.status_code == 302
    assert {trust_of(i) for i in ids} == {Trust.UNREVIEWED}
    assert Node.objects.filter(pk__in=ids, decayed_at__isnull=True).count() == 2
    assert trust_of(junk[2].pk) == Trust.PROPOSED


def test_bulk_decline_of_all_from_one_agent_leaves_the_others(owner_client, junk):
    owner_client.post(
        "/review/bulk/",
        {
            "action": "decline",
            "scope": "matching",
            "agent": "agent:junk",
            "reason": "noise",
            "confirmed": "yes",
        },
    )
    assert {trust_of(n.pk) for n in junk[:12]} == {Trust.UNREVIEWED}
    assert {trust_of(n.pk) for n in junk[12:]} == {Trust.PROPOSED}
    assert Event.objects.filter(kind="declined", reason="noise").count() == 12


def test_bulk_reject_asks_first_and_lists_what_it_will_do(owner_client, junk, counts):
    before = counts()
    response = owner_client.post(
        "/review/bulk/", {"action": "reject", "scope": "matching", "agent": "agent:scout"}
    )
    html = response.content.decode()
    assert response.status_code == 200 and "Reject 2 proposals?" in html
    assert f'name="ids" value="{junk[12].pk}"' in html and "Useful fact 0." in html
    assert counts() == before


def test_bulk_reject_confirmed_tombstones_exactly_the_listed_nodes(owner_client, junk):
    ids = [junk[12].pk, junk[13].pk]
    owner_client.post(
        "/review/bulk/",
        {"action": "reject", "confirmed": "yes", "ids": ids, "reason": "false", "typed_count": "2"},
    )
    assert {trust_of(i) for i in ids} == {Trust.REJECTED}
    assert trust_of(junk[0].pk) == Trust.PROPOSED


def test_bulk_reject_leaves_ground_alone_and_says_so(owner_client, junk, make_note):
    ground = make_note("The spare key is with Ana.")
    root_as_owner(ground)
    response = owner_client.post(
        "/review/bulk/",
        {
            "action": "reject",
            "confirmed": "yes",
            "ids": [ground.pk, junk[0].pk],
            "reason": "x",
            "typed_count": "2",
        },
        follow=True,
    )
    html = response.content.decode()
    assert f"#{ground.pk} was left as it was" in html and "supersed" in html
    assert (trust_of(ground.pk), trust_of(junk[0].pk)) == (Trust.GROUND, Trust.REJECTED)


def test_bulk_refuses_an_unknown_action_and_no_selection(owner_client, junk, counts):
    before = counts()
    for data in ({"action": "root", "ids": [junk[0].pk]}, {"action": "decline"}):
        response = owner_client.post("/review/bulk/", data, follow=True)
        assert "Nothing was written" in response.content.decode()
    assert counts() == before


def test_a_re_proposal_shows_the_earlier_decline_in_the_queue(owner_client, junk):
    node = junk[0]
    owner_client.post(f"/review/{node.pk}/decline/", {"reason": "not a fact"})
    assert node.pk not in _rows(owner_client.get("/review/"))
    propose(node.pk, actor="agent:junk", reason="asking again")
    html = owner_client.get("/review/").content.decode()
    assert "Proposed again." in html and "not a fact" in html and "asking again" in html


def test_rooting_goes_on_to_the_next_item_with_the_same_filters(owner_client, junk):
    first, second = junk[12], junk[13]
    response = owner_client.post(
        f"/review/{first.pk}/root/",
        {"adopting_words": "Yes.", "expected_body_hash": first.body_hash, "agent": "agent:scout"},
    )
    assert response["Location"] == f"/review/{second.pk}/root/?agent=agent%3Ascout"
    last = owner_client.post(
        f"/review/{second.pk}/root/",
        {"adopting_words": "Yes.", "expected_body_hash": second.body_hash, "agent": "agent:scout"},
    )
    assert last["Location"] == "/review/?agent=agent%3Ascout"


def test_the_root_screen_shows_origins_and_the_proposers_reason(owner_client, junk, root_note):
    html = owner_client.get(f"/review/{junk[0].pk}/root/").content.decode()
    assert "What it came from" in html and f"#{root_note.pk}" in html
    assert "Seed import: the owner" in html and "looked important" in html


def test_reject_shows_a_confirmation_that_writes_nothing(owner_client, junk, counts):
    before = counts()
    html = owner_client.get(f"/review/{junk[0].pk}/reject/").content.decode()
    assert "What rejecting does" in html and "tombstone" in html and "Decline" in html
    assert counts() == before


def test_ground_is_rejected_only_through_the_second_page(owner_client, make_note, counts):
    ground = make_note("The spare key is with Ana.")
    root_as_owner(ground)
    before = counts()
    first = owner_client.post(
        f"/review/{ground.pk}/reject/", {"confirmed": "yes", "reason": "false"}
    ).content.decode()
    assert 'id="ground-warning"' in first and "Supersede with a correction" in first
    assert counts() == before
    second = owner_client.post(f"/review/{ground.pk}/reject/", {"step": "ground"}).content.decode()
    assert 'name="ground_confirmed" value="yes"' in second
    owner_client.post(
        f"/review/{ground.pk}/reject/",
        {"confirmed": "yes", "ground_confirmed": "yes", "reason": "never true"},
    )
    assert trust_of(ground.pk) == Trust.REJECTED


def test_no_page_shows_a_rejected_nodes_words(owner_client, junk):
    node = junk[0]
    owner_client.post(f"/review/{node.pk}/reject/", {"confirmed": "yes", "reason": "false"})
    for url in (f"/review/{node.pk}/", f"/node/{node.pk}/", f"/review/{node.pk}/reject/"):
        html = owner_client.get(url).content.decode()
        assert "Junk fact number 0." not in html, url


def test_a_signed_out_decline_writes_nothing(junk):
    """The owner's pages need the owner's session: a signed-out POST writes nothing."""
    client = Client()
    response = client.post(f"/review/{junk[0].pk}/decline/")
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert trust_of(junk[0].pk) == Trust.PROPOSED


@pytest.mark.parametrize(
    "url", ["/review/bulk/", "/review/{id}/decline/", "/review/decays/{id}/undo/"]
)
def test_new_posts_without_a_csrf_token_are_refused(junk, counts, url):
    client = Client(enforce_csrf_checks=True)
    client.force_login(ensure_owner())
    before = counts()
    data = {"action": "decline", "ids": [junk[0].pk]}
    assert client.post(url.format(id=junk[0].pk), data).status_code == 403
    assert counts() == before


def test_rejecting_from_the_queue_goes_back_to_the_queue(owner_client, junk):
    page = owner_client.get("/review/?agent=agent:junk").content.decode()
    assert f"/review/{junk[0].pk}/reject/?next=/review/%3Fagent%3Dagent%3Ajunk" in page
    response = owner_client.post(
        f"/review/{junk[0].pk}/reject/",
        {"confirmed": "yes", "reason": "false", "next": "/review/?agent=agent%3Ajunk"},
    )
    assert response["Location"] == "/review/?agent=agent%3Ajunk"


def test_bulk_reject_leaves_sealed_ground_alone(owner_client, junk, make_note):
    ground = make_note("The spare key is with Ana.")
    root_as_owner(ground)
    seal(ground.pk, owner="owner")
    owner_client.post(
        "/review/bulk/",
        {"action": "reject", "confirmed": "yes", "ids": [ground.pk], "reason": "x"},
    )
    assert not Event.objects.filter(node=ground, kind="rejected").exists()
