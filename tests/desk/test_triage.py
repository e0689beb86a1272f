"""Triage as an inbox: where the root page stands in its filter, Decline and Skip beside Root,
the next item of the same filter after any act, near-duplicates named, and row acts that keep
the filter and the page without JavaScript."""

from __future__ import annotations

import pytest

from memory.models import Event, EventKind, Trust
from memory.trust import trust_of
from review.ceremony import decline, propose, seal
from tests._helpers.acts import root_as_owner

TOPICS = ["boiler", "garden hose", "spare key", "bicycle pump", "passport", "wifi router"]


@pytest.fixture
def queue(make_note):
    """Proposals by two agents, interleaved: scout's are nodes 0, 2, 4; junk's 1, 3, 5."""
    nodes = []
    for i, topic in enumerate(TOPICS):
        node = make_note(f"The {topic} lives in room {i} of the house.")
        propose(node.pk, actor="agent:scout" if i % 2 == 0 else "agent:junk")
        nodes.append(node)
    return nodes


def test_the_root_page_says_where_it_stands_in_the_filter(owner_client, queue):
    html = owner_client.get(f"/review/{queue[2].pk}/root/?agent=agent:scout").content.decode()
    assert "<strong>2 of 3</strong> in this filter" in html
    assert f'href="/review/{queue[4].pk}/root/?agent=agent%3Ascout" id="skip"' in html


def test_skip_wraps_round_to_the_oldest_of_the_filter(owner_client, queue):
    html = owner_client.get(f"/review/{queue[4].pk}/root/?agent=agent:scout").content.decode()
    assert "<strong>3 of 3</strong>" in html
    assert f'href="/review/{queue[0].pk}/root/?agent=agent%3Ascout" id="skip"' in html


def test_rooting_after_a_skip_goes_on_past_it_in_the_same_filter(owner_client, queue):
    response = owner_client.post(
        f"/review/{queue[2].pk}/root/",
        {
            "adopting_words": "Yes.",
            "expected_body_hash": queue[2].body_hash,
            "agent": "agent:scout",
        },
    )
    assert response.url == f"/review/{queue[4].pk}/root/?agent=agent%3Ascout"


def test_decline_on_the_root_page_goes_on_to_the_next_of_the_filter(owner_client, queue):
    html = owner_client.get(f"/review/{queue[0].pk}/root/?agent=agent:scout").content.decode()
    assert 'form="decline-form"' in html
    response = owner_client.post(
        f"/review/{queue[0].pk}/decline/",
        {"next": f"/review/{queue[2].pk}/root/?agent=agent%3Ascout"},
    )
    assert response.url == f"/review/{queue[2].pk}/root/?agent=agent%3Ascout"
    assert f'value="/review/{queue[2].pk}/root/?agent=agent%3Ascout"' in html
    assert trust_of(queue[0].pk) == Trust.UNREVIEWED


def test_a_plain_decline_on_a_filtered_page_lands_back_on_that_page(owner_client, make_note):
    for i in range(55):
        propose(make_note(f"Junk thought number {i} of many.").pk, actor="agent:junk")
    here = "/review/?agent=agent%3Ajunk&page=2"
    html = owner_client.get(here).content.decode()
    row = html.index('aria-label="Decline #')
    assert f'name="next" value="{here.replace("&", "&amp;")}"' in html[row - 600 : row]
    first = owner_client.get(here).context["items"][0].node.pk
    response = owner_client.post(f"/review/{first}/decline/", {"next": here})
    assert response.url == here


def test_an_htmx_row_keeps_the_page_it_sits_on(owner_client, queue):
    seal(queue[1].pk, owner="owner")
    here = "/review/?agent=agent%3Ascout&page=1"
    response = owner_client.post(
        f"/review/{queue[1].pk}/unseal/",
        {},
        headers={"HX-Request": "true", "HX-Current-URL": f"http://testserver{here}"},
    )
    assert f'value="{here.replace("&", "&amp;")}"' in response.content.decode()


def test_a_near_duplicate_of_a_node_just_rooted_is_named(owner_client, make_note):
    first = make_note("The owner's doctor is Dr. Ana Costa at the Alvalade clinic.")
    again = make_note("The owner's doctor is Dr. Ana Costa at the Alvalade clinic now.")
    for node in (first, again):
        propose(node.pk, actor="agent:scout")
    root_as_owner(first)
    queue_html = owner_client.get("/review/").content.decode()
    root_html = owner_client.get(f"/review/{again.pk}/root/").content.decode()
    for html in (queue_html, root_html):
        assert f'id="near-{again.pk}"' in html
        assert f"#{first.pk}</a>, which you rooted " in html  # now, or seconds ago
        assert f"Decline as duplicate of #{first.pk}" in html


def test_the_same_words_of_another_kind_are_named_by_the_content_key(owner_client, make_note):
    note = make_note("Water the fig tree on Sundays.")
    fact = make_note("water the fig tree  on sundays.", kind="inference")
    for node in (note, fact):
        propose(node.pk, actor="agent:scout")
    html = owner_client.get("/review/").content.decode()
    assert f"#{note.pk}</a>, also waiting: the same words." in html


def test_a_sealed_node_is_never_named_as_a_near_duplicate(owner_client, make_note):
    hidden = make_note("The safe's code is written under the desk drawer.")
    shown = make_note("The safe's code is written under the desk drawer, left side.")
    root_as_owner(hidden)  # rooted lately, so a candidate until the seal
    propose(shown.pk, actor="agent:scout")
    seal(hidden.pk, owner="owner")
    html = owner_client.get(f"/review/{shown.pk}/root/").content.decode()
    assert f'id="near-{shown.pk}"' not in html and f"#{hidden.pk}<" not in html


def test_decline_as_duplicate_records_the_link_and_a_reproposal_shows_it(owner_client, queue):
    owner_client.post(f"/review/{queue[1].pk}/decline/", {"duplicate_of": str(queue[0].pk)})
    event = Event.objects.get(node=queue[1], kind=EventKind.DECLINED)
    assert (event.related_node_id, event.detail["duplicate_of"]) == (queue[0].pk, queue[0].pk)
    propose(queue[1].pk, actor="agent:junk")
    html = owner_client.get("/review/").content.decode()
    assert f'as a duplicate of <a href="/node/{queue[0].pk}/">#{queue[0].pk}</a>' in html


def test_decline_as_duplicate_of_a_sealed_node_answers_as_if_it_were_unknown(queue):
    seal(queue[0].pk, owner="owner")
    with pytest.raises(Exception, match=f"node {queue[0].pk} not found"):
        decline(queue[1].pk, owner="owner", duplicate_of=queue[0].pk)
    assert trust_of(queue[1].pk) == Trust.PROPOSED


def test_near_duplicates_read_the_stored_vectors_sleep_made(owner_client, make_note):
    from tests._helpers.vectors import place

    # Unrelated words, but vectors 10 degrees apart (cosine 0.98): the stored ones decide.
    first = place(make_note("Buy oat milk on Fridays."), 0)
    again = place(make_note("The dentist moved to Rua Augusta."), 10)
    for node in (first, again):
        propose(node.pk, actor="agent:scout")
    html = owner_client.get(f"/review/{again.pk}/root/").content.decode()
    assert f"#{first.pk}</a>, also waiting." in html
