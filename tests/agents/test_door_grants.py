"""The JSON API holds each token to its grant: a read-only token writes through no route, and
the domains a recall asks for are the domains searched, never more than the token's.
(MCP's doors: tests/agents/test_mcp_grants.py.)"""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.questions import plant_question
from tests._helpers.agents import error_of, make_agent

NOTE = {"body": "New.", "kind": "note", "jurisdiction": "home", "signature": "scout"}
# Every write route of the API, each with a body that a writable token would get through.
WRITES = {
    "nodes": lambda n, q: ("nodes", {**NOTE, "origins": [{"id": n.pk}]}),
    "turns": lambda n, q: ("turns", {"conversation": "c", "user": "Hi?", "assistant": "Hi."}),
    "propose": lambda n, q: (f"nodes/{n.pk}/propose", {"reason": "often read"}),
    "extract": lambda n, q: (f"nodes/{n.pk}/extract", {"start": 0, "end": 7}),
    "questions": lambda n, q: ("questions", {"body": "When is it serviced?", "about": [n.pk]}),
    "feed": lambda n, q: (f"questions/{q.pk}/feed", {"node": n.pk}),
    "answer": lambda n, q: (f"questions/{q.pk}/answer", {"node": n.pk}),
    "reopen": lambda n, q: (f"questions/{q.pk}/reopen", {"node": n.pk}),
}


@pytest.mark.parametrize("route", WRITES)
def test_a_read_only_token_is_refused_on_every_write_route(client, make_note, counts, route):
    node = make_note("The boiler is serviced in March.")
    question = plant_question("Who services it?", about=[node.pk], signature="owner")
    writer = make_agent(client, name="writer")
    reader = make_agent(client, name="reader", read_only=True)
    path, body = WRITES[route](node, question)
    before = counts()
    response = reader.post(path, body)
    assert (response.status_code, error_of(response)) == (403, "read_only")
    assert counts() == before
    assert writer.post(path, body).status_code in (200, 201)  # the body itself is lawful


@pytest.fixture
def two_domains(client, make_note):
    agent = make_agent(client, name="both", domains=("personal", "work"))
    home = make_note("The boiler hums in the cellar.", domain="personal")
    work = make_note("The boiler contract runs to June.", domain="work")
    found = agent.get("recall", {"q": "boiler", "scope": "home"}).json()["results"]
    assert {p["id"] for p in found} == {home.pk, work.pk}  # the grant holds both
    return agent, home, work


def test_recall_asked_for_one_of_two_granted_domains_searches_only_that_one(two_domains):
    agent, home, work = two_domains
    asked = agent.get("recall", {"q": "boiler", "scope": "home", "domain": "work"}).json()
    assert [p["id"] for p in asked["results"]] == [work.pk]
    asked = agent.get("recall", {"q": "boiler", "scope": "home", "domain": "personal"}).json()
    assert [p["id"] for p in asked["results"]] == [home.pk]


def test_recall_asked_for_a_domain_outside_the_grant_gives_nothing_of_it(two_domains, make_note):
    agent, _, work = two_domains
    make_note("The boiler pressure is 1.5 bar.", domain="health")
    asked = agent.get("recall", {"q": "boiler", "scope": "home", "domain": "health"}).json()
    assert asked["results"] == [] and asked["other_scopes"] == {}
    mixed = agent.get("recall", {"q": "boiler", "scope": "home", "domain": ["health", "work"]})
    assert [p["id"] for p in mixed.json()["results"]] == [work.pk]


def test_context_asked_for_one_of_two_granted_domains_reads_only_that_one(two_domains):
    agent, _, work = two_domains
    asked = agent.get("context", {"q": "boiler", "scope": "home", "domain": "work"}).json()
    assert [item["id"] for item in asked["items"]] == [work.pk]


def test_a_token_revoked_on_the_dashboard_is_refused_at_its_next_call(client, owner_client, db):
    agent = make_agent(client, name="scout")
    assert agent.get("recall", {"q": "boiler"}).status_code == 200
    revoked = owner_client.post(reverse("tokens"), {"name": "scout", "confirmed": "yes"})
    assert revoked.status_code == 302
    response = agent.get("recall", {"q": "boiler"})
    assert (response.status_code, error_of(response)) == (401, "bad_token")
