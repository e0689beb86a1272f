"""An MCP client session (the mcp package's own stdio client) against `manage.py mcp --token`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from _async import run_async
from _realdb import database_env, real_db_fixture  # noqa: F401 (a fixture)
from django.conf import settings
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memory.models import Node, RecallLog
from memory.tokens import create_token, revoke_token
from memory.write import write_node


def _params(db: Path | str, token: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp", "--token", token],
        cwd=str(settings.BASE_DIR),
        env={
            "DJANGO_SETTINGS_MODULE": "grove.settings",
            **database_env(db),
            "GROVE_DATA_DIR": str(settings.DATA_DIR),
            # Beside the SQLite file; PostgreSQL's database has no directory: the test's own.
            "GROVE_SCROLL_DIR": str(
                db.parent / "scroll" if isinstance(db, Path) else settings.GROVE_SCROLL_DIR
            ),
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        },
    )


def _session(db: Path | str, token: str, script):
    """Run `script(session)` inside a live MCP session; returns what it returns."""

    async def main():
        async with (
            stdio_client(_params(db, token)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await script(session)

    return run_async(main)


def _data(result) -> dict:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


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
        written = _data(
            await session.call_tool(
                "remember",
                {
                    "body": "The heat pump filter is changed every October.",
                    "origins": [{"id": seed.pk, "relation": "derived_from"}],
                },
            )
        )
        found = _data(await session.call_tool("recall", {"query": "heat pump filter"}))
        body = _data(await session.call_tool("read", {"node_id": written["id"]}))
        bodies = _data(await session.call_tool("context", {"query": "heat pump", "budget": 50}))
        why = _data(await session.call_tool("recall", {"query": "heat pump", "why": True}))
        return names, written, found, body, bodies, why

    names, written, found, body, bodies, why = _session(db, "desk", script)
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

    hidden, orphan = _session(db, "desk", script)
    assert hidden.is_error and "not_found" in hidden.content[0].text
    assert orphan.is_error and "no_origin" in orphan.content[0].text
    assert not Node.objects.filter(body="No origin.").exists()


def test_a_revoked_token_cannot_start_a_server(seeded):
    db, _ = seeded
    revoke_token(name="desk")
    import subprocess

    params = _params(db, "desk")
    done = subprocess.run(
        [params.command, *params.args],
        cwd=params.cwd,
        env={**os.environ, **params.env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "no active token" in done.stderr
