"""The MCP tools in this process (the SDK's in-memory client against build_server): each tool
hands the model's arguments to its operation as named, and every error comes back coded.
tests/agents/test_mcp.py drives the same tools over stdio in a server process."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from mcp import Client
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import TypeAdapter, ValidationError

from agents import operations
from agents.mcp_server import INSTRUCTIONS, _coded, build_server
from memory.models import Edge, Event, EventKind, Kind, Node, RecallLog
from memory.tokens import create_token, revoke_token
from memory.write import write_node
from tests._helpers.aio import run_async
from tests._helpers.mcp import tool_data

# The tools run on worker threads with their own connections: what they read must be committed.
pytestmark = pytest.mark.django_db(transaction=True)


def calls(token: str, *steps: tuple[str, dict]) -> list:
    """Each (tool, arguments) called in turn in one in-process session; their results."""

    async def main():
        async with Client(build_server(token_name=token)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in steps]

    return run_async(main)


def one(token: str, tool: str, arguments: dict) -> dict:
    return tool_data(calls(token, (tool, arguments))[0])


def error(token: str, tool: str, arguments: dict) -> str:
    result = calls(token, (tool, arguments))[0]
    assert result.is_error
    return result.content[0].text


@pytest.fixture
def seed() -> Node:
    create_token(name="desk", domains=["personal"])
    return write_node(
        body="The heat pump filter is cleaned in October.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="house.md",
    ).node


def test_remember_writes_a_home_note_signed_by_the_agent_unless_told_otherwise(seed):
    plain = one("desk", "remember", {"body": "Clean it.", "origins": [{"id": seed.pk}]})
    node = Node.objects.get(pk=plain["id"])
    assert (node.kind, node.jurisdiction, node.signature) == ("note", "home", "agent:desk")
    assert (node.source, node.domain, node.referent_time) == ("", "personal", None)
    told = {
        "body": "A guess about the filter.",
        "origins": [{"id": seed.pk, "relation": "derived_from"}],
        "kind": "inference",
        "jurisdiction": "wild",
        "signature": "scout",
        "source": "chat.md",
        "domain": "personal",
        "referent_time": "2024-10-01T09:00:00+00:00",
    }
    node = Node.objects.get(pk=one("desk", "remember", told)["id"])
    assert (node.kind, node.jurisdiction, node.signature) == ("inference", "wild", "scout")
    assert (node.source, node.referent_time) == ("chat.md", datetime(2024, 10, 1, 9, tzinfo=UTC))
    assert Edge.objects.filter(from_node=node, to_node=seed, kind="derived_from").exists()


def test_commit_turn_records_the_exchange_as_given(seed):
    arguments = {
        "conversation": "kitchen",
        "user": "When is the filter cleaned?",
        "assistant": "In October.",
        "referent_time": "2024-10-02T08:00:00+00:00",
    }
    node = Node.objects.get(pk=one("desk", "commit_turn", arguments)["id"])
    assert node.kind == Kind.PAIR and "When is the filter cleaned?" in node.body
    assert "In October." in node.body and node.domain == "personal"
    assert node.referent_time == datetime(2024, 10, 2, 8, tzinfo=UTC)
    later = one("desk", "commit_turn", {**arguments, "referent_time": "", "user": "And now?"})
    assert Node.objects.get(pk=later["id"]).referent_time is None


def test_propose_carries_the_reason_waiting_counts_it_and_extract_takes_the_span(seed):
    assert one("desk", "propose", {"node_id": seed.pk, "reason": "it is right"})["id"] == seed.pk
    event = Event.objects.get(node=seed, kind=EventKind.PROPOSED)
    assert event.actor == "agent:desk" and "it is right" in str([event.reason, event.detail])
    assert one("desk", "waiting", {})["yours"] == 1
    part = one("desk", "extract", {"node_id": seed.pk, "start": 4, "end": 13})
    assert Node.objects.get(pk=part["id"]).body == "heat pump"


def test_recall_and_dig_search_the_scope_asked_with_the_limit_and_why_asked(seed):
    write_node(
        body="The heat pump hums at night.",
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": seed.pk, "relation": "derived_from"}],
    )
    home, wild, both, why = calls(
        "desk",
        ("recall", {"query": "heat pump"}),
        ("recall", {"query": "heat pump", "scope": "wild"}),
        ("recall", {"query": "heat pump", "scope": "both", "limit": 1}),
        ("recall", {"query": "heat pump", "scope": "both", "why": True}),
    )
    assert {p["jurisdiction"] for p in tool_data(home)["results"]} == {"home"}
    assert [p["id"] for p in tool_data(wild)["results"]] == [seed.pk]
    assert len(tool_data(both)["results"]) == 1 and "why" not in tool_data(both)["results"][0]
    assert all("why" in p for p in tool_data(why)["results"])
    dug = one("desk", "dig", {"query": "heat pump", "scope": "wild", "limit": 3, "why": True})
    assert dug == {"results": []}
    assert RecallLog.objects.filter(dig=True, scope="wild").exists()


def test_recall_as_of_a_time_before_a_node_was_written_leaves_it_out(seed):
    before = {"query": "heat pump", "scope": "wild", "as_of": "2000-01-01T00:00Z"}
    assert one("desk", "recall", {**before, "as_of": ""})["results"]
    found = one("desk", "recall", before)
    assert found["results"] == []


def test_read_and_context_give_bodies_in_the_scope_and_budget_asked(seed):
    body = one("desk", "read", {"node_id": seed.pk})["body"]
    assert body == seed.body
    home = one("desk", "context", {"query": "heat pump"})
    wild = one("desk", "context", {"query": "heat pump", "scope": "wild", "budget": 100})
    tight = one("desk", "context", {"query": "heat pump", "scope": "wild", "budget": 3})
    assert (home["items"], home["budget"]) == ([], 2000)
    assert ([i["body"] for i in wild["items"]], wild["budget"]) == ([seed.body], 100)
    assert (tight["items"], tight["skipped"]) == ([], 1)


def test_a_walk_opens_looks_around_steps_and_reads_with_tickets(seed):
    note = write_node(
        body="Clean the heat pump filter.",
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": seed.pk, "relation": "derived_from"}],
    ).node
    ticket = one("desk", "walk", {"action": "open", "node_id": note.pk})["ticket"]
    around = one("desk", "walk", {"action": "around", "ticket": ticket})
    assert seed.pk in [route["target"] for route in around["routes"]]
    moved = one(
        "desk", "walk", {"action": "step", "ticket": ticket, "direction": "out", "target": seed.pk}
    )["ticket"]
    assert one("desk", "walk", {"action": "read", "ticket": moved})["body"] == seed.body


def test_questions_are_asked_fed_answered_and_listed_over_mcp(seed):
    asked = one("desk", "ask_question", {"body": "Which month?", "about": [seed.pk]})
    question = asked["question"]
    assert asked["open"] and Node.objects.get(pk=question).domain == "personal"
    assert one("desk", "open_questions", {"node_id": seed.pk})["questions"]
    note = write_node(
        body="October.",
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": seed.pk, "relation": "derived_from"}],
    ).node
    link = {"question_id": question, "node_id": note.pk}
    assert one("desk", "question_link", {**link, "act": "feed"})["open"]
    assert not one("desk", "question_link", {**link, "act": "answer"})["open"]
    assert one("desk", "question_link", {**link, "act": "reopen"})["open"]


def test_a_token_revoked_between_calls_is_refused_at_the_next(seed):
    async def main():
        async with Client(build_server(token_name="desk")) as client:
            before = await client.call_tool("waiting", {})
            revoke_token(name="desk")
            return before, await client.call_tool("waiting", {})

    before, after = run_async(main)
    assert not before.is_error
    assert after.is_error and after.content[0].text.startswith("unauthorized: ")


def test_a_read_only_token_is_refused_every_write_tool(seed):
    create_token(name="reader", domains=["personal"], read_only=True)
    for tool, arguments in [
        ("remember", {"body": "x", "origins": [{"id": seed.pk}]}),
        ("commit_turn", {"conversation": "c", "user": "u", "assistant": "a"}),
        ("propose", {"node_id": seed.pk}),
        ("extract", {"node_id": seed.pk, "start": 0, "end": 3}),
    ]:
        assert error("reader", tool, arguments).startswith("read_only: "), tool


def test_each_kind_of_tool_error_says_its_code(seed):
    assert error("desk", "read", {"node_id": seed.pk + 99}).startswith("not_found: ")
    assert error("desk", "read", {"node_id": "1"}) == (
        "bad_field: node_id: Input should be a valid integer"
    )
    assert error("desk", "read", {}).startswith("bad_field: node_id: Field required")
    assert error("desk", "nope", {}) == "unknown_tool: Unknown tool: nope"
    assert error("desk", "recall", {"query": "x", "why": 1}).startswith("bad_field: why: ")


def test_every_problem_with_the_arguments_is_named_in_one_error(seed):
    assert error("desk", "ask_question", {}) == (
        "bad_field: body: Field required; about: Field required"
    )


def test_a_validation_error_about_the_arguments_as_a_whole_names_them_arguments():
    with pytest.raises(ValidationError) as invalid:
        TypeAdapter(dict).validate_python([1])
    error = ToolError("Error executing tool read")
    error.__cause__ = invalid.value
    assert _coded(error) == "bad_field: arguments: Input should be a valid dictionary"


def test_a_tool_that_crashes_says_server_error_and_not_why(seed, monkeypatch):
    def crash(token):
        raise RuntimeError("the secret details")

    monkeypatch.setattr(operations, "waiting_for_owner", crash)
    assert (
        error("desk", "waiting", {}) == "server_error: the tool failed; the server's log says why"
    )


def test_the_server_introduces_itself_as_grove_with_its_instructions(seed):
    async def main():
        async with Client(build_server(token_name="desk")) as client:
            return client.server_info, client.instructions

    info, instructions = run_async(main)
    assert info is not None and info.name == "grove"
    assert instructions == INSTRUCTIONS


def test_a_bad_field_inside_a_list_is_named_by_its_path(seed):
    assert error("desk", "remember", {"body": "b", "origins": [1]}) == (
        "bad_field: origins.0: Input should be a valid dictionary"
    )
