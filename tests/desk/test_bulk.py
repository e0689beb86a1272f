"""Bulk acts that are safe to press: shown before they run, one batch on the record, undone as
a batch, without JavaScript (plain POST and redirect)."""

from __future__ import annotations

import re

import pytest

from memory.models import Event, Node, Trust
from memory.trust import trust_of
from review.ceremony import propose


@pytest.fixture
def noise(make_note):
    """Twelve proposals from one noisy agent, two from another."""
    nodes = []
    for i in range(12):
        node = make_note(f"Noise line {i}.")
        propose(node.pk, actor="agent:noisy", reason="maybe")
        nodes.append(node)
    for i in range(2):
        node = make_note(f"Kept fact {i}.", domain="work")
        propose(node.pk, actor="agent:scout", reason="seen twice")
        nodes.append(node)
    return nodes


def _all_from(agent: str, action: str, **extra: str) -> dict[str, str]:
    return {"action": action, "scope": "matching", "agent": agent, "reason": "noise", **extra}


def _batch(response) -> str:
    return response["Location"].split("batch=")[1].split("&")[0]


def test_a_bulk_decline_first_shows_count_filter_and_sample(owner_client, noise, counts):
    before = counts()
    response = owner_client.post("/review/bulk/", _all_from("agent:noisy", "decline"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Decline 12 proposals?" in html
    assert "every proposal from agent:noisy" in html
    assert "Noise line 0." in html and "Kept fact 0." not in html
    assert counts() == before


def test_a_confirmed_bulk_decline_is_one_batch_and_keeps_the_filters(owner_client, noise):
    response = owner_client.post(
        "/review/bulk/", _all_from("agent:noisy", "decline", confirmed="yes")
    )
    assert response.status_code == 302
    assert response["Location"].startswith("/review/?agent=agent%3Anoisy&batch=")
    declines = Event.objects.filter(kind="declined")
    assert declines.count() == 12
    assert {e.detail["batch"] for e in declines} == {_batch(response)}


def test_a_bulk_decline_undone_proposes_each_again_by_its_agent(owner_client, noise):
    done = owner_client.post("/review/bulk/", _all_from("agent:noisy", "decline", confirmed="yes"))
    assert {trust_of(n.pk) for n in noise[:12]} == {Trust.UNREVIEWED}
    undo = owner_client.post(f"/review/batches/{_batch(done)}/undo/", {"next": "/review/"})
    assert undo.status_code == 302
    assert {trust_of(n.pk) for n in noise[:12]} == {Trust.PROPOSED}
    queue = owner_client.get("/review/?agent=agent:noisy")
    assert len(queue.context["items"]) == 12


def test_a_bulk_reject_needs_the_count_typed(owner_client, noise):
    ids = [noise[12].pk, noise[13].pk]
    data = {"action": "reject", "confirmed": "yes", "ids": ids, "reason": "false"}
    refused = owner_client.post("/review/bulk/", {**data, "typed_count": "3"})
    assert refused.status_code == 400 and "type 2" in refused.content.decode()
    assert {trust_of(i) for i in ids} == {Trust.PROPOSED}
    owner_client.post("/review/bulk/", {**data, "typed_count": "2"})
    assert {trust_of(i) for i in ids} == {Trust.REJECTED}


def test_a_bulk_let_go_from_the_queue_takes_the_noise_out_of_recall(owner_client, noise):
    response = owner_client.post(
        "/review/bulk/", _all_from("agent:noisy", "let_go", confirmed="yes")
    )
    ids = [n.pk for n in noise[:12]]
    assert Node.objects.filter(pk__in=ids, decayed_at__isnull=False).count() == 12
    assert Node.objects.filter(pk__in=[n.pk for n in noise[12:]], decayed_at=None).count() == 2
    owner_client.post(f"/review/batches/{_batch(response)}/undo/")
    assert Node.objects.filter(pk__in=ids, decayed_at__isnull=True).count() == 12
    assert {trust_of(i) for i in ids} == {Trust.PROPOSED}


def test_no_bulk_button_is_preselected_or_the_primary_act(owner_client, noise):
    html = owner_client.get("/review/").content.decode()
    form = html[html.index('id="bulk-form"') : html.index("</form>", html.index('id="bulk-form"'))]
    assert not re.search(r"<option[^>]*\sselected", form)
    buttons = re.findall(r"<button[^>]*>", form)
    assert len(buttons) == 2 and all('class="secondary"' in b for b in buttons)


def test_the_audit_log_lists_one_batch_and_undoes_it(owner_client, noise):
    done = owner_client.post("/review/bulk/", _all_from("agent:noisy", "decline", confirmed="yes"))
    batch = _batch(done)
    owner_client.post(f"/review/{noise[12].pk}/decline/", {"reason": "other"})
    page = owner_client.get(f"/audit/?batch={batch}")
    assert page.status_code == 200
    assert len(page.context["page"].object_list) == 12
    assert f"/review/batches/{batch}/undo/" in page.content.decode()
