"""Agents the owner governs, over HTTP: a write limit per token (429 with Retry-After), domains
and read-only changed after minting (on the next call), mute and auto-decline; and what waits."""

from __future__ import annotations

import pytest
import time_machine

from memory.models import Event, EventKind
from memory.tokens import change_token
from memory.trust import trust_of
from review.ceremony import propose
from review.queue import waiting
from tests._helpers.agents import error_of, make_agent, write_note

pytestmark = pytest.mark.django_db


def test_a_write_over_the_limit_is_429_with_retry_after(client, root_note):
    agent = make_agent(client)
    change_token(name="scout", write_limit=2)
    with time_machine.travel("2026-03-01 10:00:00Z", tick=False):
        assert write_note(agent, root_note, body="one").status_code == 201
        assert write_note(agent, root_note, body="two").status_code == 201
        refused = write_note(agent, root_note, body="three")
    assert refused.status_code == 429 and error_of(refused) == "rate_limited"
    assert refused["Retry-After"] == "60"
    assert not Event.objects.filter(kind=EventKind.ARRIVED, snapshot__excerpt="three").exists()


def test_the_limit_counts_per_token_and_opens_again_next_minute(client, root_note):
    noisy, quiet = make_agent(client), make_agent(client, name="quiet")
    change_token(name="scout", write_limit=1)
    change_token(name="quiet", write_limit=1)
    with time_machine.travel("2026-03-01 10:00:00Z", tick=False):
        assert write_note(noisy, root_note, body="a").status_code == 201
        assert write_note(noisy, root_note, body="b").status_code == 429
        assert write_note(quiet, root_note, body="c").status_code == 201
    with time_machine.travel("2026-03-01 10:00:45Z", tick=False):
        assert write_note(noisy, root_note, body="d")["Retry-After"] == "15"
    with time_machine.travel("2026-03-01 10:01:01Z", tick=False):
        assert write_note(noisy, root_note, body="e").status_code == 201


def test_reads_are_not_limited(client, root_note):
    agent = make_agent(client)
    change_token(name="scout", write_limit=1)
    assert write_note(agent, root_note, body="the one write").status_code == 201
    for _ in range(3):
        assert agent.get("recall", {"q": "write"}).status_code == 200


def test_editing_domains_takes_effect_on_the_next_call(client, make_note):
    work = make_note("The work server is rebooted on Fridays.", domain="work")
    agent = make_agent(client)
    assert agent.get(f"nodes/{work.pk}").status_code == 404
    change_token(name="scout", domains=["personal", "work"])
    assert agent.get(f"nodes/{work.pk}").status_code == 200
    change_token(name="scout", domains=["personal"])
    assert agent.get(f"nodes/{work.pk}").status_code == 404


def test_read_only_set_after_minting_refuses_the_next_write(client, root_note):
    agent = make_agent(client)
    change_token(name="scout", read_only=True)
    assert error_of(write_note(agent, root_note, body="refused")) == "read_only"


def test_a_muted_agents_proposals_wait_aside(client, make_note):
    noisy, other = make_agent(client), make_agent(client, name="other")
    first, second = make_note("Muted proposal."), make_note("Heard proposal.")
    change_token(name="scout", muted=True)
    assert noisy.post(f"nodes/{first.pk}/propose").status_code == 200
    assert other.post(f"nodes/{second.pk}/propose").status_code == 200
    queue = waiting()
    assert [i.node.pk for i in queue.items] == [second.pk]
    assert queue.muted == {"agent:scout": 1}
    change_token(name="scout", muted=False)
    assert {i.node.pk for i in waiting().items} == {first.pk, second.pk}


def test_auto_decline_declines_a_proposal_as_it_arrives(client, make_note):
    agent = make_agent(client)
    node = make_note("An agent's eager proposal.")
    change_token(name="scout", auto_decline=True)
    answer = agent.post(f"nodes/{node.pk}/propose")
    assert answer.json()["trust"] == "unreviewed" and trust_of(node.pk) == "unreviewed"
    declined = Event.objects.get(kind=EventKind.DECLINED, node=node)
    assert declined.reason == "auto_declined" and declined.detail["token"] == "scout"


def test_reads_and_recalls_are_events_of_the_agent(client, make_note):
    node = make_note("The heat pump filter is cleaned in October.")
    agent = make_agent(client)
    agent.get("recall", {"q": "heat pump filter"})
    agent.get(f"nodes/{node.pk}")
    recalled = Event.objects.get(kind=EventKind.RECALLED)
    assert recalled.token == agent.token and recalled.actor == "agent:scout"
    assert recalled.detail["query"] == "heat pump filter" and recalled.detail["ids"] == [node.pk]
    read = Event.objects.get(kind=EventKind.READ)
    assert read.node_id == node.pk and read.token == agent.token


def test_waiting_tells_an_agent_what_waits_in_its_domains(client, make_note):
    agent = make_agent(client)
    mine, elsewhere = make_note("Mine to propose."), make_note("Work's.", domain="work")
    propose(mine.pk, actor="agent:scout", token=agent.token)
    propose(elsewhere.pk, actor="agent:other")
    answer = agent.get("waiting").json()
    assert answer["waiting"] == 1 and answer["yours"] == 1
    assert answer["message"].startswith("1 item waiting for your review")
