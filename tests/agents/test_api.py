"""The agent API's endpoints doing their work, over HTTP (Django's test client)."""

from __future__ import annotations

import pytest

from memory.models import Event, Node, RecallLog
from tests._helpers.agents import error_of, make_agent, write_note


@pytest.fixture
def agent(client, db):
    return make_agent(client, domains=["work", "personal"])


def test_a_write_answers_201_with_its_id_and_hash(agent, root_note):
    response = write_note(agent, root_note)
    assert response.status_code == 201
    payload = response.json()
    node = Node.objects.get(pk=payload["id"])
    assert (payload["body_hash"], payload["status"]) == (node.body_hash, "created")
    assert node.out_edges.get().to_node_id == root_note.pk


def test_a_write_without_a_domain_goes_to_the_tokens_first(agent, root_note):
    assert write_note(agent, root_note).json()["domain"] == "work"
    other = write_note(agent, root_note, body="Tomatoes by the wall.", domain="personal")
    assert other.json()["domain"] == "personal"


def test_a_duplicate_answers_200_with_the_existing_id(agent, root_note):
    first = write_note(agent, root_note).json()
    again = write_note(agent, root_note, body="the boiler is  serviced in MARCH.")
    assert again.status_code == 200
    assert again.json()["id"] == first["id"] and again.json()["status"] == "duplicate"


def test_a_decayed_node_is_revived_with_200(agent, root_note):
    first = write_note(agent, root_note).json()
    Node.objects.filter(pk=first["id"]).update(decayed_at="2024-01-01T00:00:00Z")
    again = write_note(agent, root_note)
    assert (again.status_code, again.json()["status"]) == (200, "revived")
    assert Event.objects.filter(node_id=first["id"], kind="revived").exists()


def test_a_write_keeps_the_event_clock_it_was_given(agent, root_note):
    response = write_note(agent, root_note, referent_time="2024-05-08T13:56:00+02:00")
    node = Node.objects.get(pk=response.json()["id"])
    assert node.referent_time.isoformat() == "2024-05-08T11:56:00+00:00"


def test_a_turn_becomes_a_pair_on_the_scroll(agent, settings, tmp_path):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    turn = {"conversation": "kitchen", "user": "When is the boiler due?", "assistant": "March."}
    first = agent.post("turns", turn)
    second = agent.post("turns", {**turn, "user": "And the filter?", "assistant": "October."})
    assert (first.status_code, second.status_code) == (201, 201)
    pair = Node.objects.get(pk=second.json()["id"])
    assert (pair.kind, pair.domain, pair.signature) == ("pair", "work", "agent:scout")
    assert pair.out_edges.get(kind="responds_to").to_node_id == first.json()["id"]


def test_recall_gives_previews_in_scope_and_is_logged(agent, make_note):
    note = make_note("The boiler is serviced in March.", domain="work")
    results = agent.get("recall", {"q": "boiler", "scope": "home"}).json()["results"]
    assert [p["id"] for p in results] == [note.pk]
    assert next(iter(results[0])) == "jurisdiction"
    assert "body" not in results[0]
    assert RecallLog.objects.get().actor == "agent:scout"
    note.refresh_from_db()
    assert note.access_count == 0  # discovery is not reading


def test_reading_by_id_gives_the_body_and_counts(agent, make_note):
    note = make_note("The boiler is serviced in March.", domain="personal")
    response = agent.get(f"nodes/{note.pk}")
    assert response.status_code == 200
    assert response.json()["body"] == note.body
    note.refresh_from_db()
    assert note.access_count == 1


def test_authority_reports_trust_without_the_body(agent, make_note):
    note = make_note("The boiler is serviced in March, every year, by the same firm. " * 10)
    report = agent.get(f"nodes/{note.pk}/authority").json()
    assert (report["trust"], report["body_hash"]) == ("unreviewed", note.body_hash)
    assert note.body not in str(report)


def test_an_agent_may_propose(agent, make_note):
    note = make_note("The boiler is serviced in March.")
    response = agent.post(f"nodes/{note.pk}/propose", {"reason": "read it five times"})
    assert response.json() == {"id": note.pk, "trust": "proposed"}
    event = Event.objects.get(node=note, kind="proposed")
    assert event.actor == "agent:scout"
    again = agent.post(f"nodes/{note.pk}/propose")
    assert again.status_code == 409


def test_context_reads_what_fits_the_budget(agent, make_note):
    short = make_note("Boiler: March.")  # 14 chars, 4 tokens
    long = make_note("The boiler " + "really " * 60 + "needs a service.")
    response = agent.get("context", {"q": "boiler", "budget": 10, "scope": "home"})
    payload = response.json()
    assert [item["id"] for item in payload["items"]] == [short.pk]
    assert (payload["used"], payload["skipped"]) == (4, 1)
    short.refresh_from_db()
    long.refresh_from_db()
    assert (short.access_count, long.access_count) == (1, 0)  # a skipped body is never read


def test_context_accepts_a_json_post(agent, make_note):
    make_note("Boiler: March.")
    payload = agent.post("context", {"q": "boiler", "budget": 100}).json()
    assert payload["items"][0]["body"] == "Boiler: March."


def test_context_refuses_a_budget_out_of_range(agent):
    assert error_of(agent.get("context", {"q": "x", "budget": 0})) == "bad_field"


def test_a_walk_opens_looks_around_steps_and_reads(agent, make_note):
    first = make_note("Boiler: March.")
    second = make_note("Filter: October.", origins=[{"id": first.pk, "relation": "cites"}])
    ticket = agent.post("walk/open", {"node_id": first.pk}).json()["ticket"]
    around = agent.post("walk/around", {"ticket": ticket})
    assert around.status_code == 200
    assert str(second.pk) in around.content.decode()
    ticket = agent.post("walk/open", {"node_id": first.pk}).json()["ticket"]
    agent.post("walk/around", {"ticket": ticket})
    stepped = agent.post("walk/step", {"ticket": ticket, "direction": "in", "target": second.pk})
    assert stepped.status_code == 200, stepped.json()
    read = agent.post("walk/read", {"ticket": stepped.json()["ticket"]})
    assert read.json()["body"] == "Filter: October."


def test_a_forged_ticket_is_refused(agent):
    response = agent.post("walk/around", {"ticket": "forged-ticket-0000"})
    assert (response.status_code, error_of(response)) == (403, "ticket_forged")


def test_a_spent_ticket_is_refused(agent, make_note):
    first = make_note("Boiler: March.")
    second = make_note("Filter: October.", origins=[{"id": first.pk, "relation": "cites"}])
    ticket = agent.post("walk/open", {"node_id": first.pk}).json()["ticket"]
    agent.post("walk/around", {"ticket": ticket})
    agent.post("walk/step", {"ticket": ticket, "direction": "in", "target": second.pk})
    again = agent.post("walk/step", {"ticket": ticket, "direction": "in", "target": second.pk})
    assert (again.status_code, error_of(again)) == (403, "ticket_spent")


def test_another_agent_cannot_use_my_ticket(agent, client, make_note):
    first = make_note("Boiler: March.")
    ticket = agent.post("walk/open", {"node_id": first.pk}).json()["ticket"]
    thief = make_agent(client, name="thief", domains=["personal"])
    response = thief.post("walk/around", {"ticket": ticket})
    assert (response.status_code, error_of(response)) == (403, "ticket_holder_mismatch")


def test_a_walk_cannot_open_outside_the_scope(agent, make_note):
    foreign = make_note("Blood pressure 120/80.", domain="health")
    response = agent.post("walk/open", {"node_id": foreign.pk})
    assert (response.status_code, error_of(response)) == (404, "not_found")


def test_a_step_along_an_undisclosed_route_is_refused(agent, make_note):
    first = make_note("Boiler: March.")
    second = make_note("Filter: October.", origins=[{"id": first.pk, "relation": "cites"}])
    ticket = agent.post("walk/open", {"node_id": first.pk}).json()["ticket"]
    response = agent.post("walk/step", {"ticket": ticket, "direction": "in", "target": second.pk})
    assert (response.status_code, error_of(response)) == (403, "route_undisclosed")


def test_reading_a_wild_node_is_cited_by_the_agents_next_turn(agent, settings, tmp_path):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    page = agent.post(
        "nodes",
        {
            "body": "Heat pumps need their filters cleaned every autumn.",
            "kind": "internet",
            "jurisdiction": "wild",
            "signature": "scout",
            "source": "https://example.org/heat-pumps",
        },
    ).json()["id"]
    assert agent.get(f"nodes/{page}").status_code == 200
    turn = {"conversation": "house", "user": "Filter?", "assistant": "In autumn."}
    pair = agent.post("turns", turn).json()["id"]
    assert Node.objects.get(pk=pair).out_edges.filter(kind="cites", to_node_id=page).exists()
