"""MCP's doors hold a token to its grant on every call: over stdio (a real `manage.py mcp`
subprocess) and over HTTP (/mcp on the real `serve` process). The JSON API's:
tests/agents/test_door_grants.py."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from memory.models import Edge, Event, Node
from memory.questions import plant_question
from memory.tokens import create_token
from memory.write import write_node
from tests._helpers.mcp import grove_server, mcp_http_session, mcp_session, tool_data


def _import(body: str, **fields: Any) -> Node:
    fields = {"kind": "import", "jurisdiction": "wild", "signature": "importer", **fields}
    return write_node(body=body, source="house.md", **fields).node


@pytest.fixture
def seed(real_db) -> Node:
    return _import("The heat pump filter is cleaned in October.")


def _counts() -> tuple[int, int, int]:
    return Node.objects.count(), Edge.objects.count(), Event.objects.count()


def _revoke_through_the_dashboard(name: str) -> None:
    from dashboard.owner import ensure_owner

    owner = Client()
    owner.force_login(ensure_owner())
    response = owner.post(reverse("tokens"), {"name": name, "confirmed": "yes"})
    assert response.status_code == 302


def test_a_token_revoked_on_the_dashboard_stops_a_running_stdio_server_at_its_next_call(
    real_db, seed
):
    create_token(name="desk", domains=["personal"])

    async def script(session):
        first = await session.call_tool("recall", {"query": "heat pump", "scope": "wild"})
        _revoke_through_the_dashboard("desk")
        return first, await session.call_tool("recall", {"query": "heat pump", "scope": "wild"})

    first, second = mcp_session(real_db, "desk", script)
    assert [p["id"] for p in tool_data(first)["results"]] == [seed.pk]
    assert second.is_error
    assert second.content[0].text == "unauthorized: no active token named 'desk'"


# Every write tool, each with arguments that a writable token would get through.
def _writes(node: Node, question: Node) -> dict[str, dict[str, Any]]:
    return {
        "remember": {"body": "Clean it before winter.", "origins": [{"id": node.pk}]},
        "commit_turn": {"conversation": "c", "user": "Filter?", "assistant": "October."},
        "propose": {"node_id": node.pk},
        "extract": {"node_id": node.pk, "start": 0, "end": 8},
        "ask_question": {"body": "Who cleans it?", "about": [node.pk]},
        "question_link": {"question_id": question.pk, "act": "feed", "node_id": node.pk},
    }


def _every_write(seed: Node):
    question = plant_question("Which filter?", about=[seed.pk], signature="owner")
    writes = _writes(seed, question)

    async def script(session):
        names = {tool.name for tool in (await session.list_tools()).tools}
        answers = {name: await session.call_tool(name, args) for name, args in writes.items()}
        return names, answers

    return script


def _all_refused(names: set[str], answers: dict[str, Any]) -> None:
    assert set(answers) <= names
    refused = {
        n for n, a in answers.items() if a.is_error and a.content[0].text.startswith("read_only: ")
    }
    assert refused == set(answers)


def test_a_read_only_token_is_refused_on_every_write_tool_over_stdio(real_db, seed):
    create_token(name="reader", domains=["personal"], read_only=True)
    script = _every_write(seed)
    before = _counts()
    _all_refused(*mcp_session(real_db, "reader", script))
    assert _counts() == before


def test_a_read_only_token_is_refused_on_every_write_tool_over_http(real_db, seed, tmp_path):
    _, secret = create_token(name="reader", domains=["personal"], read_only=True)
    script = _every_write(seed)
    before = _counts()
    with grove_server(real_db, tmp_path) as url:
        _all_refused(*mcp_http_session(url, secret, script))
    assert _counts() == before


def test_the_scope_a_model_asks_for_in_a_recall_is_the_scope_searched(real_db, seed):
    create_token(name="desk", domains=["personal"])
    home = write_node(
        body="The heat pump is serviced by Ana.",
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": seed.pk}],
    ).node

    async def script(session):
        return {
            scope: tool_data(
                await session.call_tool("recall", {"query": "heat pump", "scope": scope})
            )
            for scope in ("home", "wild", "both")
        }

    found = mcp_session(real_db, "desk", script)
    assert {p["id"] for p in found["both"]["results"]} == {home.pk, seed.pk}
    assert [p["id"] for p in found["home"]["results"]] == [home.pk]
    assert [p["id"] for p in found["wild"]["results"]] == [seed.pk]


def test_the_domains_a_model_asks_for_in_a_recall_are_the_domains_searched(real_db, seed):
    create_token(name="desk", domains=["personal", "work"])
    work = _import("The heat pump contract runs to June.", domain="work")
    _import("The heat pump noise complaint.", domain="health")

    async def script(session):
        async def ids(**extra: str) -> list[int]:
            args = {"query": "heat pump", "scope": "wild", **extra}
            return [p["id"] for p in tool_data(await session.call_tool("recall", args))["results"]]

        return await ids(), await ids(domain="work"), await ids(domain="health")

    granted, asked, outside = mcp_session(real_db, "desk", script)
    assert set(granted) == {seed.pk, work.pk}  # the grant holds both
    assert asked == [work.pk]
    assert outside == []
