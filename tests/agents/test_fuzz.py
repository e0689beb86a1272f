"""Fuzz of every API operation (each method and path the OpenAPI document describes) and every
MCP tool: hostile JSON of any shape in every field answers a 2xx or a coded 4xx, never a server
error, and a refusal stores nothing. Fixed seed, bounded examples (tests/_helpers/hostile.py)."""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.server.mcpserver.exceptions import ToolError

from agents.mcp_server import build_server
from agents.openapi import SPEC
from memory.tokens import create_token
from tests._helpers.agents import make_agent
from tests._helpers.aio import outside_any_loop
from tests._helpers.hostile import FORM_TEXT, FUZZ, JSON

OPERATIONS = sorted(
    (method, path)
    for path, item in SPEC["paths"].items()
    for method in item
    if path != "/openapi.json"
)
FIELDS = sorted(
    {"body", "kind", "jurisdiction", "signature", "origins", "source", "domain", "referent_time",
     "metadata", "q", "budget", "scope", "limit", "as_of", "node_id", "ticket", "direction",
     "target", "reason", "conversation", "user", "assistant", "start", "end", "about", "node",
     "why", "query", "question_id", "act", "action"}
)  # fmt: skip
CODED = re.compile(r"^[a-z_]+: ")
TOOLS = sorted(tool.name for tool in build_server(token_name="fuzz")._tool_manager.list_tools())
SEGMENTS = st.one_of(st.just("seed"), FORM_TEXT.filter(lambda t: not set(t) & set("/?#%\x00")))


@pytest.fixture
def agent(client, db):
    return make_agent(client, name="fuzz", domains=["personal"])


def _query(fields: dict) -> str:
    pairs = [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in fields.items()]
    # As a client on the wire would send them: lone surrogates as their invalid UTF-8 bytes.
    return "&".join(f"{k}={quote(v, safe='', errors='surrogatepass')}" for k, v in pairs)


@FUZZ
@given(
    operation=st.sampled_from(OPERATIONS),
    node=SEGMENTS,
    fields=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=4),
)
def test_no_api_operation_answers_a_server_error(agent, root_note, counts, operation, node, fields):
    method, template = operation
    path = "/api/v1" + template.replace("{node_id}", str(root_note.pk) if node == "seed" else node)
    before = counts()
    if method == "get":
        response = agent.client.get(f"{path}?{_query(fields)}", headers=agent.auth)
    else:
        body = json.dumps(fields).encode("utf-8", errors="surrogatepass")
        response = agent.client.post(
            path, data=body, content_type="application/json", headers=agent.auth
        )
    assert response.status_code < 500, (operation, fields, response.content[:300])
    assert response["Content-Type"] == "application/json"
    if response.status_code >= 400:
        assert set(response.json()) == {"error"}
        assert counts() == before, (operation, fields)


@pytest.fixture
def mcp_server(transactional_db):
    # The tools run on worker threads (their own connections): the token must be committed.
    create_token(name="fuzz", domains=["personal"])
    return build_server(token_name="fuzz")


@FUZZ
@given(
    tool=st.sampled_from(TOOLS),
    arguments=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=4),
)
def test_no_mcp_tool_answers_an_uncoded_error(mcp_server, tool, arguments):
    try:
        with outside_any_loop():
            anyio.run(mcp_server.call_tool, tool, arguments)
    except ToolError as refused:
        text = str(refused)
        assert CODED.match(text) and not text.startswith("server_error"), (tool, arguments)
