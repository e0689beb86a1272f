"""Hostile input at the agents' door: every malformed, overflowing or unencodable value answers
a JSON 4xx and stores nothing (issue 12, "Bad input that answers 500 or hangs")."""

from __future__ import annotations

import pytest

from tests._helpers.agents import error_of, make_agent, write_note

OLD = "0001-01-01T00:00:00+01:00"  # before datetime.min once converted to UTC
FAR = "9999-12-31T23:59:59-01:00"  # after datetime.max once converted to UTC


@pytest.fixture
def agent(client, db):
    return make_agent(client, domains=["personal"])


def _refused(response, status: int = 400) -> str:
    assert response.status_code == status, response.content[:300]
    return error_of(response)


@pytest.mark.parametrize("when", [OLD, FAR, "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"])
def test_an_extreme_referent_time_is_refused_or_stored_without_a_500(
    agent, root_note, counts, when
):
    before = counts()
    response = write_note(agent, root_note, referent_time=when)
    if response.status_code == 201:
        assert counts()["nodes"] == before["nodes"] + 1
    else:
        assert _refused(response) == "bad_datetime"
        assert counts() == before


@pytest.mark.parametrize("when", [OLD, FAR])
def test_an_overflowing_as_of_is_refused_on_recall(agent, when):
    assert _refused(agent.get("recall", {"q": "boiler", "as_of": when})) == "bad_datetime"


@pytest.mark.parametrize("when", [OLD, FAR])
def test_an_overflowing_as_of_is_refused_on_read_and_context(agent, root_note, when):
    assert _refused(agent.get(f"nodes/{root_note.pk}", {"as_of": when})) == "bad_datetime"
    assert _refused(agent.get("context", {"q": "seed", "as_of": when})) == "bad_datetime"


@pytest.mark.parametrize("when", [OLD, FAR])
def test_an_overflowing_as_of_is_refused_on_walk(agent, root_note, when):
    response = agent.post("walk/open", {"node_id": root_note.pk, "as_of": when})
    assert _refused(response) == "bad_datetime"


@pytest.mark.parametrize("raw", ["Infinity", "-Infinity", "NaN", "1e400"])
def test_a_non_finite_number_is_refused_as_an_id(agent, raw):
    response = agent.post("walk/open", raw=f'{{"node_id": {raw}}}')
    assert _refused(response) == "malformed_json"


@pytest.mark.parametrize("raw", ["Infinity", "1e400"])
def test_a_non_finite_number_is_refused_as_an_origin_id(agent, root_note, counts, raw):
    before = counts()
    body = (
        '{"body": "x", "kind": "note", "jurisdiction": "home", "signature": "s",'
        f' "origins": [{{"id": {raw}}}]}}'
    )
    assert _refused(agent.post("nodes", raw=body)) == "malformed_json"
    assert counts() == before


@pytest.mark.parametrize("field", ["limit", "budget"])
def test_a_non_finite_limit_or_budget_is_refused(agent, field):
    response = agent.post("context", raw=f'{{"q": "seed", "{field}": 1e400}}')
    assert _refused(response) == "malformed_json"
    assert _refused(agent.get("context", {"q": "seed", field: "Infinity"})) == "bad_field"


def test_a_huge_origin_id_is_unknown(agent, root_note, counts):
    before = counts()
    origins = [{"id": 99999999999999999999, "relation": "derived_from"}]
    assert _refused(write_note(agent, root_note, origins=origins)) in {
        "unknown_origin",
        "bad_origin",
    }
    assert counts() == before


def test_a_huge_node_id_in_the_path_is_not_found(agent):
    assert _refused(agent.get("nodes/99999999999999999999"), 404) == "not_found"


def test_a_five_thousand_digit_integer_is_refused(agent, counts):
    before = counts()
    response = agent.post("walk/open", raw='{"node_id": ' + "9" * 5000 + "}")
    assert _refused(response) == "malformed_json"
    assert counts() == before


def test_a_hundred_thousand_nested_brackets_are_refused(agent, counts):
    before = counts()
    assert _refused(agent.post("nodes", raw="[" * 100_000 + "]" * 100_000)) == "malformed_json"
    assert _refused(agent.post("nodes", raw='{"a":' * 100_000 + "1" + "}" * 100_000)) == (
        "malformed_json"
    )
    assert counts() == before


@pytest.mark.parametrize("field", ["body", "signature", "source"])
def test_a_lone_surrogate_in_a_node_field_is_refused(agent, root_note, counts, field):
    before = counts()
    raw = (
        '{"body": "b", "kind": "internet", "jurisdiction": "wild", "signature": "s", "source": "s"}'
    ).replace(f'"{field}": "', f'"{field}": "\\ud800')
    assert _refused(agent.post("nodes", raw=raw)) == "bad_text"
    assert counts() == before


def test_a_lone_surrogate_in_a_reason_is_refused(agent, root_note, counts):
    before = counts()
    response = agent.post(f"nodes/{root_note.pk}/propose", raw='{"reason": "\\udfff why"}')
    assert _refused(response) == "bad_text"
    assert counts() == before


def test_a_lone_surrogate_in_a_turn_is_refused(agent, counts, tmp_path, settings):
    settings.GROVE_SCROLL_DIR = tmp_path
    before = counts()
    raw = '{"conversation": "c\\ud800", "user": "u", "assistant": "a"}'
    assert _refused(agent.post("turns", raw=raw)) == "bad_text"
    assert counts() == before and not list(tmp_path.iterdir())


def test_an_unknown_api_route_answers_json_404(agent):
    response = agent.get("no/such/route")
    assert _refused(response, 404) == "no_route"
    assert _refused(agent.post("nodes/12/nonsense"), 404) == "no_route"


def test_an_oversized_source_is_refused(agent, root_note, counts, settings):
    before = counts()
    response = write_note(agent, root_note, source="s" * (settings.GROVE_MAX_SOURCE_CHARS + 1))
    assert _refused(response, 413) == "too_large"
    assert counts() == before


def test_an_oversized_signature_is_refused(agent, root_note, counts, settings):
    before = counts()
    response = write_note(
        agent, root_note, signature="s" * (settings.GROVE_MAX_SIGNATURE_CHARS + 1)
    )
    assert _refused(response, 413) == "too_large"
    assert counts() == before


def test_a_vector_row_shorter_than_its_dim_does_not_crash_recall(make_note, agent):
    """A row edited in the file (8 bytes claiming the model's dim) is skipped, not reshaped."""
    from memory.models import Vector
    from memory.vectors.embed import embed_missing, get_embedder

    good = make_note("The heron fishes at dawn.")
    embed_missing()
    embedder = get_embedder()
    short = make_note("A second heron.")
    Vector.objects.create(node=short, model=embedder.name, dim=embedder.dim, data=b"\0" * 8)
    response = agent.get("recall", {"q": "heron"})
    assert response.status_code == 200
    assert good.pk in [r["id"] for r in response.json()["results"]]
