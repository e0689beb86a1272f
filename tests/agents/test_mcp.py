"""An MCP client session (the mcp package's own stdio client) against `manage.py mcp --token`."""

from __future__ import annotations

import os

import pytest
from mcp.client.session import ClientSession

from memory.forgetting import let_go
from memory.models import Node, RecallLog
from memory.tokens import create_token, revoke_token
from memory.write import write_node
from tests._helpers.mcp import mcp_session, server_params, tool_data


@pytest.fixture
def seeded(real_db):
    create_token(name="desk", domains=["personal"])
    seed = write_node(
        body="Notebook import.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="notebook.md",
    ).node
    return real_db, seed


def test_an_agent_remembers_recalls_and_reads_over_mcp(seeded):
    db, seed = seeded

    async def script(session: ClientSession):
        names = {tool.name for tool in (await session.list_tools()).tools}
        written = tool_data(
            await session.call_tool(
                "remember",
                {
                    "body": "The heat pump filter is changed every October.",
                    "origins": [{"id": seed.pk, "relation": "derived_from"}],
                },
            )
        )
        found = tool_data(await session.call_tool("recall", {"query": "heat pump filter"}))
        body = tool_data(await session.call_tool("read", {"node_id": written["id"]}))
        bodies = tool_data(await session.call_tool("context", {"query": "heat pump", "budget": 50}))
        why = tool_data(await session.call_tool("recall", {"query": "heat pump", "why": True}))
        return names, written, found, body, bodies, why

    names, written, found, body, bodies, why = mcp_session(db, "desk", script)
    assert "why" not in found["results"][0]
    assert why["results"][0]["why"].startswith("words: heat, pump")
    assert {"remember", "commit_turn", "recall", "read", "context", "walk", "propose"} <= names
    assert written["status"] == "created"
    assert found["results"][0]["id"] == written["id"]
    assert "body" not in found["results"][0]
    assert body["body"] == "The heat pump filter is changed every October."
    node = Node.objects.get(pk=written["id"])
    assert [item["id"] for item in bodies["items"]] == [written["id"]]
    assert (node.domain, node.access_count) == ("personal", 2)
    assert RecallLog.objects.filter(actor="agent:desk").exists()


def test_refusals_come_back_as_tool_errors(seeded):
    db, seed = seeded
    foreign = write_node(
        body="Blood pressure 120/80.",
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": seed.pk}],
        domain="health",
    ).node

    async def script(session: ClientSession):
        hidden = await session.call_tool("read", {"node_id": foreign.pk})
        orphan = await session.call_tool("remember", {"body": "No origin.", "origins": []})
        return hidden, orphan

    hidden, orphan = mcp_session(db, "desk", script)
    assert hidden.is_error and "not_found" in hidden.content[0].text
    assert orphan.is_error and "no_origin" in orphan.content[0].text
    assert not Node.objects.filter(body="No origin.").exists()


def test_a_revoked_token_cannot_start_a_server(seeded):
    db, _ = seeded
    revoke_token(name="desk")
    import subprocess

    params = server_params(db, "desk")
    done = subprocess.run(
        [params.command, *params.args],
        cwd=params.cwd,
        env={**os.environ, **params.env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "no active token" in done.stderr


def test_an_agent_digs_up_a_forgotten_node_and_reading_it_brings_it_back(seeded):
    db, seed = seeded
    gone = write_node(
        body="The lighthouse keeper's ledger of storms.",
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": seed.pk}],
    ).node
    let_go(gone.pk, actor="owner")

    async def script(session: ClientSession):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        found = tool_data(await session.call_tool("recall", {"query": "lighthouse ledger"}))
        dug = tool_data(await session.call_tool("dig", {"query": "lighthouse ledger"}))
        body = tool_data(await session.call_tool("read", {"node_id": gone.pk}))
        return tools, found, dug, body

    tools, found, dug, body = mcp_session(db, "desk", script)
    assert "forgotten_matches" in tools["recall"].description
    assert "recall found nothing" in tools["dig"].description
    assert (found["results"], found["forgotten_matches"]) == ([], 1)
    assert [p["id"] for p in dug["results"]] == [gone.pk]
    assert dug["results"][0]["decayed_why"] == "you let it go"
    assert body["body"] == "The lighthouse keeper's ledger of storms."
    assert Node.objects.get(pk=gone.pk).decayed_at is None
    assert RecallLog.objects.filter(actor="agent:desk", dig=True).count() == 1


def test_the_waiting_tool_tells_an_agent_what_waits_for_its_owner(seeded):
    from review.ceremony import propose

    db, seed = seeded
    propose(seed.pk, actor="agent:other")

    async def script(session: ClientSession):
        return tool_data(await session.call_tool("waiting", {}))

    said = mcp_session(db, "desk", script)
    assert said["waiting"] == 1 and said["yours"] == 0
    assert said["message"].startswith("1 item waiting for your review")
