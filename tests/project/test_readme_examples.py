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
    for needle in ("token create", "/api/v1/nodes", "/api/v1/recall", "/api/v1/context", "ingest"):
        assert needle in bash, needle
    assert "mcpServers" in blocks_marked_tested("json")[0]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "Notes"
    root.mkdir()
    (root / "House.md").write_text("# House\nThe heat pump is in the cellar. See [[Garden]].\n")
    (root / "Garden.md").write_text("# Garden\nTomatoes by the south wall.\n")
    return root


def _env(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "grove.settings",
        **database_env(connection.settings_dict["NAME"]),
        "GROVE_DATA_DIR": str(settings.DATA_DIR),
        **extra,
    }


@pytest.mark.django_db(transaction=True)
def test_the_bash_examples_run_against_a_live_server(live_server, vault, tmp_path, settings):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    script = "set -euo pipefail\n" + "\n".join(blocks_marked_tested("bash"))
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=settings.BASE_DIR,
        env=_env(GROVE_URL=live_server.url, VAULT=str(vault)),
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
