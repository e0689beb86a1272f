"""Dig through the agents' door: GET /api/v1/dig, recall's forgotten_matches, and an agent's
read of what it dug up bringing it back."""

from __future__ import annotations

import pytest

from memory.forgetting import let_go
from memory.models import Event, EventKind, Node, RecallLog
from tests._helpers.agents import error_of, make_agent
from tests._helpers.events import mark


@pytest.fixture
def agent(client, db):
    return make_agent(client)


@pytest.fixture
def gone(make_note):
    node = make_note("The lighthouse keeper's ledger of storms.")
    let_go(node.pk, actor="owner")
    return node


def test_recall_names_how_many_forgotten_nodes_matched(agent, gone):
    answer = agent.get("recall", {"q": "lighthouse ledger"}).json()
    assert answer == {"results": [], "forgotten_matches": 1, "other_scopes": {"wild": 0}}


def test_dig_answers_labelled_packets_and_is_logged_as_a_dig(agent, gone):
    response = agent.get("dig", {"q": "lighthouse ledger"})
    assert response.status_code == 200
    [found] = response.json()["results"]
    assert (found["id"], found["decay_reason"], found["decayed_why"]) == (
        gone.pk,
        "owner_let_go",
        "you let it go",
    )
    assert "body" not in found
    assert RecallLog.objects.get(dig=True).actor == "agent:scout"
    assert Node.objects.get(pk=gone.pk).decayed_at is not None


def test_dig_refuses_an_empty_query_and_a_past_instant(agent):
    assert error_of(agent.get("dig", {})) == "missing_field"
    assert (
        error_of(agent.get("dig", {"q": "x", "as_of": "2026-01-01T00:00:00Z"})) == "unknown_field"
    )


def test_a_token_never_digs_outside_its_domains(agent, make_note):
    work = make_note("The lighthouse budget.", domain="work")
    let_go(work.pk, actor="owner")
    assert Node.objects.filter(pk=work.pk, decayed_at__isnull=False).exists()
    assert agent.get("dig", {"q": "lighthouse"}).json()["results"] == []
    assert agent.get("recall", {"q": "lighthouse"}).json()["forgotten_matches"] == 0


def test_a_decayed_node_not_dug_up_answers_404_like_a_missing_one(agent, gone):
    hidden, missing = agent.get(f"nodes/{gone.pk}"), agent.get("nodes/999999")
    assert (hidden.status_code, missing.status_code) == (404, 404)
    assert error_of(hidden) == error_of(missing)
    assert Node.objects.get(pk=gone.pk).decayed_at is not None


def test_reading_a_dug_node_revives_it_and_what_it_holds(agent, make_note):
    origin = make_note("The keeper's first ledger.")
    child = make_note(
        "The lighthouse ledger, copied.", origins=[{"id": origin.pk, "relation": "derived_from"}]
    )
    mark(origin, "decayed")  # the sweep's decay: what a revived node holds comes back with it
    let_go(child.pk, actor="owner")
    assert [p["id"] for p in agent.get("dig", {"q": "lighthouse"}).json()["results"]] == [child.pk]
    body = agent.get(f"nodes/{child.pk}")
    assert body.status_code == 200 and body.json()["body"] == "The lighthouse ledger, copied."
    assert Node.objects.filter(pk__in=[child.pk, origin.pk], decayed_at__isnull=True).count() == 2
    revived = Event.objects.get(node_id=child.pk, kind=EventKind.REVIVED)
    assert (revived.reason, revived.actor) == ("dug_and_read", "agent:scout")
    assert Node.objects.get(pk=child.pk).access_count == 1


def test_another_tokens_dig_does_not_open_the_node_to_me(agent, client, gone):
    other = make_agent(client, name="other")
    assert other.get("dig", {"q": "lighthouse"}).json()["results"]
    assert agent.get(f"nodes/{gone.pk}").status_code == 404
