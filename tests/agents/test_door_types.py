"""One parser at the agents' door: wrong JSON types, booleans where numbers are meant, NUL and
lone surrogates in any text field, Unicode digits and overflowing ids each answer 400 with its
code, and nothing is stored."""

from __future__ import annotations

import pytest
from django.conf import settings

from memory.models import Node
from tests._helpers.agents import error_of, make_agent, write_note


@pytest.fixture
def agent(client, db):
    return make_agent(client, domains=["personal"])


def _refused(response) -> str:
    assert response.status_code == 400, response.content[:300]
    return error_of(response)


@pytest.mark.parametrize("source", [False, 0, [], {}])
def test_a_source_that_is_not_text_is_refused(agent, root_note, counts, source):
    before = counts()
    assert _refused(write_note(agent, root_note, source=source)) == "bad_field"
    assert counts() == before


@pytest.mark.parametrize("metadata", [False, 0, [], ""])
def test_metadata_that_is_not_an_object_is_refused(agent, root_note, counts, metadata):
    before = counts()
    assert _refused(write_note(agent, root_note, metadata=metadata)) == "bad_field"
    assert counts() == before


@pytest.mark.parametrize("budget", [True, 1.9])
def test_a_context_budget_that_is_not_a_whole_number_is_refused(agent, budget):
    assert _refused(agent.post("context", {"q": "seed", "budget": budget})) == "bad_field"


@pytest.mark.parametrize("node_id", [True, 1.5, "²"])
def test_walk_open_wants_an_integer_node_id(agent, root_note, node_id):
    assert _refused(agent.post("walk/open", {"node_id": node_id})) == "bad_field"


def test_a_propose_reason_of_false_is_refused(agent, root_note):
    assert _refused(agent.post(f"nodes/{root_note.pk}/propose", {"reason": False})) == "bad_field"


def test_a_turn_signature_of_false_is_refused(agent, counts):
    before = counts()
    turn = {"conversation": "c1", "user": "hi", "assistant": "hello", "signature": False}
    assert _refused(agent.post("turns", turn)) == "bad_field"
    assert counts() == before


def test_a_lone_surrogate_in_a_question_body_is_refused(agent, root_note, counts):
    before = counts()
    raw = f'{{"body": "bad \\ud800", "about": [{root_note.pk}]}}'
    assert _refused(agent.post("questions", raw=raw)) == "bad_text"
    assert counts() == before


@pytest.mark.parametrize("field", ["signature", "source", "body"])
def test_a_nul_in_a_node_field_is_refused(agent, root_note, counts, field):
    before = counts()
    assert _refused(write_note(agent, root_note, **{field: "x\x00y"})) == "bad_text"
    assert counts() == before


def test_a_nul_in_metadata_is_refused(agent, root_note, counts):
    before = counts()
    response = write_note(agent, root_note, metadata={"k\x00": "v", "w": ["a\x00"]})
    assert _refused(response) == "bad_text"
    assert counts() == before


def test_a_nul_in_a_turn_signature_is_refused(agent, counts):
    before = counts()
    turn = {"conversation": "c1", "user": "hi", "assistant": "hello", "signature": "a\x00"}
    assert _refused(agent.post("turns", turn)) == "bad_text"
    assert counts() == before


def test_a_nul_in_a_propose_reason_is_refused(agent, root_note):
    response = agent.post(f"nodes/{root_note.pk}/propose", {"reason": "x\x00"})
    assert _refused(response) == "bad_text"


def test_a_nul_in_an_extract_signature_is_refused(agent, root_note, counts):
    before = counts()
    response = agent.post(
        f"nodes/{root_note.pk}/extract", {"start": 0, "end": 3, "signature": "a\x00"}
    )
    assert _refused(response) == "bad_text"
    assert counts() == before


def test_a_nul_in_a_recall_or_context_query_is_refused(agent):
    assert _refused(agent.get("recall", {"q": "x\x00y"})) == "bad_text"
    assert _refused(agent.get("context", {"q": "x\x00y"})) == "bad_text"
    assert _refused(agent.post("context", {"q": "x\x00y"})) == "bad_text"


def test_a_nul_in_a_question_is_refused(agent, root_note, counts):
    before = counts()
    response = agent.post("questions", {"body": "why\x00", "about": [root_note.pk]})
    assert _refused(response) == "bad_text"
    assert counts() == before


@pytest.mark.parametrize("limit", ["²", "٣", "99999999999999999999", "1.0"])
def test_a_recall_limit_in_other_digits_or_past_range_is_refused(agent, limit):
    assert _refused(agent.get("recall", {"q": "seed", "limit": limit})) == "bad_field"


@pytest.mark.parametrize("about", [[True], [1.0], [99999999999999999999]])
def test_a_question_about_a_non_id_is_refused(agent, root_note, counts, about):
    before = counts()
    assert _refused(agent.post("questions", {"body": "why?", "about": about})) == "bad_field"
    assert counts() == before


def test_an_origin_id_past_range_is_refused(agent, counts):
    before = counts()
    response = agent.post(
        "nodes",
        {
            "body": "b",
            "kind": "note",
            "jurisdiction": "home",
            "origins": [{"id": 99999999999999999999, "relation": "derived_from"}],
        },
    )
    assert response.status_code == 400, response.content
    assert counts() == before


def test_a_source_as_long_as_the_setting_allows_is_stored_whole(agent, root_note):
    source = "s" * settings.GROVE_MAX_SOURCE_CHARS
    response = write_note(agent, root_note, source=source)
    assert response.status_code == 201, response.content[:300]
    assert Node.objects.get(pk=response.json()["id"]).source == source
