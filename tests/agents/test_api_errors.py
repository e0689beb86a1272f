"""Every refusal of the agent API: the right 4xx, the documented JSON shape, nothing stored."""

from __future__ import annotations

import pytest
from django.test import override_settings

from memory.models import Node
from memory.tokens import revoke_token
from review.ceremony import reject
from tests._helpers.agents import error_of, make_agent, write_note

ENDPOINTS = [
    ("post", "nodes"),
    ("post", "turns"),
    ("get", "recall"),
    ("get", "context"),
    ("get", "nodes/1"),
    ("get", "nodes/1/authority"),
    ("post", "nodes/1/propose"),
    ("post", "walk/open"),
    ("post", "walk/around"),
    ("post", "walk/step"),
    ("post", "walk/read"),
]


@pytest.fixture
def agent(client, db):
    return make_agent(client, domains=["personal", "work"])


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_it_answers_401_without_a_token(client, db, method, path):
    response = getattr(client, method)(f"/api/v1/{path}")
    assert response.status_code == 401
    assert error_of(response) == "no_token"


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_it_answers_401_to_a_revoked_token(agent, method, path):
    revoke_token(name=agent.token.name)
    response = getattr(agent, method)(path)
    assert response.status_code == 401
    assert error_of(response) == "bad_token"


def test_it_answers_401_to_an_unknown_token(client, db):
    response = client.get("/api/v1/recall?q=x", headers={"Authorization": "Bearer grv_forged"})
    assert response.status_code == 401


def test_a_revoked_token_writes_nothing(agent, root_note, counts):
    revoke_token(name=agent.token.name)
    before = counts()
    assert write_note(agent, root_note).status_code == 401
    assert counts() == before


def test_it_refuses_malformed_json(agent, counts):
    before = counts()
    response = agent.post("nodes", raw='{"body": "half')
    assert (response.status_code, error_of(response)) == (400, "malformed_json")
    assert counts() == before


def test_it_refuses_json_that_is_not_an_object(agent):
    response = agent.post("nodes", raw="[1, 2]")
    assert (response.status_code, error_of(response)) == (400, "malformed_json")


def test_it_refuses_a_naive_referent_time(agent, root_note, counts):
    before = counts()
    response = write_note(agent, root_note, referent_time="2024-05-08T13:56:00")
    assert (response.status_code, error_of(response)) == (400, "naive_datetime")
    assert counts() == before


def test_it_refuses_a_naive_as_of_on_recall(agent):
    response = agent.get("recall", {"q": "boiler", "as_of": "2024-05-08T13:56:00"})
    assert (response.status_code, error_of(response)) == (400, "naive_datetime")


def test_it_refuses_an_unknown_kind(agent, root_note, counts):
    before = counts()
    response = write_note(agent, root_note, kind="gossip")
    assert (response.status_code, error_of(response)) == (400, "unknown_kind")
    assert counts() == before


def test_it_refuses_a_note_without_origins(agent, root_note, counts):
    before = counts()
    response = write_note(agent, root_note, origins=[])
    assert (response.status_code, error_of(response)) == (400, "no_origin")
    assert counts() == before


def test_it_refuses_an_unknown_field(agent, root_note, counts):
    before = counts()
    response = write_note(agent, root_note, origin=5)
    assert (response.status_code, error_of(response)) == (400, "unknown_field")
    assert counts() == before


def test_it_refuses_a_missing_signature(agent, root_note, counts):
    before = counts()
    response = write_note(agent, root_note, signature="  ")
    assert (response.status_code, error_of(response)) == (400, "unsigned")
    assert counts() == before


@override_settings(GROVE_MAX_REQUEST_BYTES=2_000)
def test_it_refuses_an_oversized_request_before_parsing(agent, root_note, counts):
    before = counts()
    response = write_note(agent, root_note, body="word " * 1_000)
    assert (response.status_code, error_of(response)) == (413, "request_too_large")
    assert counts() == before


@override_settings(GROVE_MAX_REQUEST_BYTES=2_000)
def test_it_refuses_a_body_longer_than_its_declared_length(agent, db):
    # A lying Content-Length must not let a large body through (nor be read past).
    response = agent.client.generic(
        "POST",
        "/api/v1/nodes",
        data=b"{" + b" " * 5_000 + b"}",
        content_type="application/json",
        headers={**agent.auth},
        CONTENT_LENGTH="10",
    )
    # Only the declared 10 bytes are read: "{" and spaces, an unfinished object.
    assert (response.status_code, error_of(response)) == (400, "malformed_json")


@override_settings(GROVE_MAX_BODY_CHARS=100)
def test_it_refuses_an_oversized_node_body(agent, root_note, counts):
    before = counts()
    response = write_note(agent, root_note, body="x" * 101)
    assert (response.status_code, error_of(response)) == (413, "too_large")
    assert counts() == before


def test_it_refuses_content_the_owner_rejected(agent, root_note, make_note):
    node = make_note("The boiler is serviced in March.")
    reject(node.pk, owner="owner", reason="wrong month")
    nodes_before = Node.objects.count()
    response = write_note(agent, root_note)
    assert (response.status_code, error_of(response)) == (409, "tombstoned")
    assert Node.objects.count() == nodes_before


def test_a_read_only_token_may_not_write(client, root_note, counts):
    agent = make_agent(client, name="reader", read_only=True)
    before = counts()
    response = write_note(agent, root_note)
    assert (response.status_code, error_of(response)) == (403, "read_only")
    assert counts() == before


def test_a_read_only_token_may_not_commit_turns(client, db):
    agent = make_agent(client, name="reader", read_only=True)
    response = agent.post("turns", {"conversation": "c1", "user": "hi", "assistant": "hello"})
    assert (response.status_code, error_of(response)) == (403, "read_only")


def test_a_read_only_token_may_not_propose(client, make_note):
    node = make_note("Ana moves in June.")
    agent = make_agent(client, name="reader", read_only=True)
    response = agent.post(f"nodes/{node.pk}/propose")
    assert (response.status_code, error_of(response)) == (403, "read_only")


def test_it_refuses_a_write_into_a_foreign_domain(agent, root_note, counts):
    before = counts()
    response = write_note(agent, root_note, domain="health")
    assert (response.status_code, error_of(response)) == (403, "domain_not_allowed")
    assert counts() == before


def test_an_origin_outside_the_scope_is_as_unknown_as_a_missing_one(agent, make_note, counts):
    foreign = make_note("Blood pressure 120/80.", domain="health")
    before = counts()
    response = write_note(agent, foreign, domain="personal")
    missing = write_note(agent, foreign, origins=[{"id": 999_999}])
    assert (response.status_code, error_of(response)) == (400, "unknown_origin")
    assert (missing.status_code, error_of(missing)) == (400, "unknown_origin")
    assert str(foreign.pk) in response.json()["error"]["message"]
    assert counts() == before


@pytest.mark.parametrize("suffix", ["", "/authority"])
def test_a_node_outside_the_scope_is_404_by_id(agent, make_note, suffix):
    foreign = make_note("Blood pressure 120/80.", domain="health")
    assert make_note("Tomatoes by the wall.").domain == "personal"  # in scope: the contrast
    response = agent.get(f"nodes/{foreign.pk}{suffix}")
    assert (response.status_code, error_of(response)) == (404, "not_found")


def test_proposing_a_node_outside_the_scope_is_404(agent, make_note):
    foreign = make_note("Blood pressure 120/80.", domain="health")
    response = agent.post(f"nodes/{foreign.pk}/propose", {"reason": "often read"})
    assert (response.status_code, error_of(response)) == (404, "not_found")


def test_recall_never_shows_another_domain(agent, make_note):
    make_note("The boiler in the cellar hums.", domain="health")
    own = make_note("The boiler is serviced in March.", domain="work")
    found = agent.get("recall", {"q": "boiler", "scope": "home"}).json()["results"]
    assert [p["id"] for p in found] == [own.pk]
    asked = agent.get("recall", {"q": "boiler", "domain": "health"}).json()["results"]
    assert asked == []


@pytest.mark.parametrize("act", ["root", "supersede", "seal", "unseal", "reject"])
def test_agents_may_not_perform_the_owners_acts(agent, make_note, act):
    node = make_note("Ana moves in June.")
    response = agent.post(f"nodes/{node.pk}/{act}", {"adopting_words": "yes"})
    assert (response.status_code, error_of(response)) == (403, "owner_only")
    assert agent.get(f"nodes/{node.pk}/authority").json()["trust"] == "unreviewed"


def test_it_answers_405_to_the_wrong_method(agent):
    response = agent.get("nodes")
    assert (response.status_code, error_of(response)) == (405, "method_not_allowed")


def test_it_refuses_a_bad_scope_and_limit(agent):
    assert error_of(agent.get("recall", {"q": "x", "scope": "all"})) == "bad_scope"
    assert error_of(agent.get("recall", {"q": "x", "limit": "1000"})) == "bad_field"
    assert error_of(agent.get("recall", {})) == "missing_field"


def test_an_id_beyond_the_integer_range_is_just_not_found(agent, root_note, counts):
    huge = 10**30
    assert error_of(agent.get(f"nodes/{huge}")) == "not_found"
    before = counts()
    response = write_note(agent, root_note, origins=[{"id": huge}])
    assert (response.status_code, error_of(response)) == (400, "unknown_origin")
    assert counts() == before


def test_context_never_reads_another_domain(agent, make_note):
    foreign = make_note("The boiler in the clinic hums.", domain="health")
    own = make_note("The boiler is serviced in March.", domain="work")
    items = agent.get("context", {"q": "boiler", "budget": 1000}).json()["items"]
    assert [item["id"] for item in items] == [own.pk]
    foreign.refresh_from_db()
    assert foreign.access_count == 0


def test_a_turn_into_a_foreign_domain_or_with_a_naive_time_is_refused(agent, settings, tmp_path):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    turn = {"conversation": "kitchen", "user": "Boiler?", "assistant": "March."}
    foreign = agent.post("turns", {**turn, "domain": "health"})
    naive = agent.post("turns", {**turn, "referent_time": "2024-05-08T13:56:00"})
    assert (foreign.status_code, error_of(foreign)) == (403, "domain_not_allowed")
    assert (naive.status_code, error_of(naive)) == (400, "naive_datetime")
    assert not Node.objects.filter(kind="pair").exists()
    assert not (tmp_path / "scroll").exists() or not any((tmp_path / "scroll").iterdir())
