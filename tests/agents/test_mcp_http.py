"""MCP over HTTP: the official Streamable HTTP client against the real `serve` process, behind
the JSON API's bearer tokens and rules."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from mcp.shared.exceptions import MCPError

from memory.models import Event, EventKind, Node
from memory.tokens import create_token, revoke_token
from memory.write import write_node
from tests._helpers.mcp import grove_server, mcp_http_session, tool_data


def refusal(url: str, secret: str, script) -> str:
    """The MCP error the client raised for the session (inside its task groups)."""
    with pytest.raises(BaseException) as raised:
        mcp_http_session(url, secret, script)
    errors, found = [raised.value], []
    while errors:
        error = errors.pop()
        if isinstance(error, BaseExceptionGroup):
            errors += error.exceptions
        elif isinstance(error, MCPError):
            found.append(str(error))
    return " ".join(found)


@pytest.fixture
def served(real_db, tmp_path):
    seed = write_node(
        body="The heat pump filter is cleaned in October.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="house.md",
    ).node
    with grove_server(real_db, tmp_path) as url:
        yield url, seed


def test_the_official_client_lists_recalls_writes_and_proposes(served):
    url, seed = served
    _, secret = create_token(name="desk", domains=["personal"])

    async def script(session):
        tools = [tool.name for tool in (await session.list_tools()).tools]
        found = tool_data(await session.call_tool("recall", {"query": "heat pump filter"}))
        wrote = tool_data(
            await session.call_tool(
                "remember", {"body": "Clean it before winter.", "origins": [{"id": seed.pk}]}
            )
        )
        proposed = tool_data(await session.call_tool("propose", {"node_id": wrote["id"]}))
        return tools, found, wrote, proposed

    tools, found, wrote, proposed = mcp_http_session(url, secret, script)
    assert {"recall", "remember", "propose", "read", "dig", "walk"} <= set(tools)
    assert (found["results"], found["other_scopes"]) == ([], {"wild": 1})
    node = Node.objects.get(pk=wrote["id"])
    assert (node.body, node.token.name) == ("Clean it before winter.", "desk")
    assert Event.objects.filter(node=node, kind=EventKind.PROPOSED, actor="agent:desk").exists()
    assert proposed


def test_a_wrong_or_revoked_token_is_refused(served):
    url, _ = served
    _, secret = create_token(name="gone", domains=["personal"])
    revoke_token(name="gone")

    async def script(session):
        return await session.list_tools()

    for presented in ("not-a-grove-token", secret):
        assert "this token is unknown or revoked" in refusal(url, presented, script)


def test_a_token_revoked_mid_session_stops_at_its_next_call(served):
    url, _ = served
    _, secret = create_token(name="desk", domains=["personal"])

    async def script(session):
        await session.call_tool("recall", {"query": "heat pump"})
        revoke_token(name="desk")
        return await session.call_tool("recall", {"query": "heat pump"})

    assert "this token is unknown or revoked" in refusal(url, secret, script)


def test_a_read_only_token_cannot_write(served):
    url, seed = served
    _, secret = create_token(name="reader", domains=["personal"], read_only=True)

    async def script(session):
        return await session.call_tool("remember", {"body": "x", "origins": [{"id": seed.pk}]})

    result = mcp_http_session(url, secret, script)
    assert result.is_error and result.content[0].text.startswith("read_only: ")
    assert not Node.objects.filter(body="x").exists()


def test_a_node_outside_the_tokens_domains_is_as_absent_as_a_missing_one(served):
    url, _ = served
    work = write_node(
        body="The heat pump contract.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="work.md",
        domain="work",
    ).node
    _, secret = create_token(name="desk", domains=["personal"])

    async def script(session):
        read = await session.call_tool("read", {"node_id": work.pk})
        missing = await session.call_tool("read", {"node_id": work.pk + 1000})
        found = await session.call_tool("recall", {"query": "heat pump contract", "scope": "both"})
        return read, missing, tool_data(found)

    read, missing, found = mcp_http_session(url, secret, script)
    assert read.is_error and read.content[0].text == (
        missing.content[0].text.replace(str(work.pk + 1000), str(work.pk))
    )
    assert work.pk not in [p["id"] for p in found["results"]]


def test_a_get_or_delete_is_refused_at_once_rather_than_held_open(served):
    url, _ = served
    _, secret = create_token(name="desk", domains=["personal"])
    for method in ("GET", "DELETE"):
        request = urllib.request.Request(
            url,
            method=method,
            headers={"Authorization": f"Bearer {secret}", "Accept": "text/event-stream"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 405
