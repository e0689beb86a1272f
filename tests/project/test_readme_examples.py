"""The examples in README.md run: every block marked <!-- tested --> is executed.

bash blocks run in order in one bash process (so their exports carry), with curl against a live
server and manage.py against the live server's database; json blocks that configure an MCP
client are launched with the mcp package's own stdio client.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memory.models import ApiToken, Edge, Node
from tests._helpers.aio import run_async
from tests._helpers.realdb import database_env

DOC = Path(settings.BASE_DIR) / "README.md"
_TESTED = re.compile(r"<!-- tested -->\s*\n```(bash|json)\n(.*?)\n```", re.DOTALL)


def blocks_marked_tested(language: str) -> list[str]:
    return [code for lang, code in _TESTED.findall(DOC.read_text()) if lang == language]


def test_the_doc_has_tested_examples_of_each_kind():
    bash = "\n".join(blocks_marked_tested("bash"))
    for needle in ("token create", "/api/v1/nodes", "/api/v1/context", "ingest", "watch --once"):
        assert needle in bash, needle
    assert "mcpServers" in blocks_marked_tested("json")[0]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "Notes"
    root.mkdir()
    (root / "House.md").write_text("# House\nThe heat pump is in the cellar. See [[Garden]].\n")
    (root / "Garden.md").write_text("# Garden\nTomatoes by the south wall.\n")
    return root


@pytest.fixture
def agents_home(tmp_path: Path) -> dict[str, str]:
    """A Claude Code and a Codex home, each with one session, as the README's blocks expect."""
    claude = tmp_path / "claude" / "projects" / "-home-ada-house"
    claude.mkdir(parents=True)
    said = {"role": "user", "content": "Where is the stopcock for the kitchen?"}
    line = {"type": "user", "uuid": "u1", "cwd": "/home/ada/house", "message": said}
    (claude / "s-1.jsonl").write_text(json.dumps(line) + "\n")
    codex = tmp_path / "codex" / "sessions" / "2025" / "12" / "08"
    codex.mkdir(parents=True)
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Ok."}],
    }
    (codex / "rollout-1.jsonl").write_text(
        json.dumps({"type": "response_item", "payload": item}) + "\n"
    )
    return {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex")}


def _env(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "grove.settings",
        **database_env(connection.settings_dict["NAME"]),
        "GROVE_DATA_DIR": str(settings.DATA_DIR),
        **extra,
    }


@pytest.mark.django_db(transaction=True)
def test_the_bash_examples_run_against_a_live_server(
    live_server, vault, agents_home, tmp_path, settings
):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    # A machine without jq: the examples read JSON with the .venv Python, so a jq that fails
    # first on PATH changes nothing.
    hidden = tmp_path / "no-jq"
    hidden.mkdir()
    (hidden / "jq").write_text("#!/bin/sh\necho 'jq: command not found' >&2\nexit 127\n")
    (hidden / "jq").chmod(0o755)
    script = "set -euo pipefail\n" + "\n".join(blocks_marked_tested("bash"))
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=settings.BASE_DIR,
        env=_env(
            GROVE_URL=live_server.url,
            VAULT=str(vault),
            PATH=f"{hidden}:{os.environ['PATH']}",
            **agents_home,
        ),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "Heat pumps need their filters cleaned every autumn." in done.stdout
    assert ApiToken.objects.get().name == "my-agent"
    page, part = Node.objects.filter(kind="internet").order_by("id")
    assert (part.body, part.metadata["extract"]["parent"]) == ("Heat pumps", page.pk)
    inference = Node.objects.get(kind="inference")
    assert (page.access_count >= 1, inference.out_edges.get().to_node_id) == (True, page.pk)
    assert Node.objects.filter(kind="pair", signature="agent:my-agent").count() == 1
    assert Node.objects.filter(kind="import", source__startswith=str(vault)).count() == 2
    assert Edge.objects.filter(kind="cites", from_node__source=str(vault / "House.md")).exists()
    assert "2 files (2 new" in done.stdout
    assert "as claude-code: 1 files (1 new" in done.stdout
    assert "scanned 2 files: 0 changed" in done.stdout  # ingest's cursors: nothing moved since
    assert '"excerpt": "Where is the stopcock for the kitchen?"' in done.stdout
    assert set(Node.objects.filter(kind="utterance").values_list("domain", flat=True)) == {"work"}
    assert '"remember",' in done.stdout  # the tools, listed over MCP's HTTP door


@pytest.mark.django_db(transaction=True)
def test_the_mcp_client_configuration_starts_a_working_server(transactional_db):
    from memory.tokens import create_token

    create_token(name="my-agent", domains=["personal"])
    config = json.loads(blocks_marked_tested("json")[0])["mcpServers"]["grove"]
    base = str(settings.BASE_DIR)
    command = config["command"].replace("/path/to/grove/.venv/bin/python", sys.executable)
    args = [arg.replace("/path/to/grove", base) for arg in config["args"]]
    env = {
        k: v.replace("/path/to/grove/var", str(settings.DATA_DIR)) for k, v in config["env"].items()
    }
    params = StdioServerParameters(
        command=command,
        args=args,
        env={**env, **database_env(connection.settings_dict["NAME"])},
    )

    async def main():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            found = await session.call_tool("recall", {"query": "anything"})
            return {tool.name for tool in tools.tools}, found

    names, found = run_async(main)
    assert {"remember", "commit_turn", "recall", "read", "walk", "propose"} <= names
    assert not found.is_error
