"""The MCP door answers every line: a tool error always starts with its code, an overflowing
origin id is a coded refusal (not a crash with a traceback), and a JSON-RPC batch line gets a
reply instead of silence."""

from __future__ import annotations

import json
import re

from memory.models import Node
from memory.tokens import create_token
from tests._helpers.mcp import tool_call_line, wire_replies

CODED = re.compile(r"^[a-z_]+: \S")


def _texts(replies: dict, ids) -> dict[int, str]:
    out = {}
    for i in ids:
        result = replies[i]["result"]
        assert result["isError"], result
        out[i] = result["content"][0]["text"]
    return out


def test_an_origin_id_of_1e400_is_a_coded_tool_error_without_a_traceback(real_db):
    create_token(name="desk", domains=["personal"])
    line = tool_call_line(1, "remember", '{"body": "b", "origins": [{"id": 1e400}]}')
    replies = wire_replies(real_db, "desk", [line], {1})
    assert _texts(replies, [1])[1].startswith("bad_origin: ")
    assert "Traceback" not in replies["stderr"]
    assert not Node.objects.filter(body="b").exists()


def test_every_tool_error_starts_with_its_code(real_db):
    create_token(name="desk", domains=["personal"])
    lines = [
        tool_call_line(1, "read", '{"node_id": "abc"}'),
        tool_call_line(2, "read", '{"node_id": 99999999999999999999}'),
        tool_call_line(3, "recall", '{"query": "x", "limit": true}'),
        tool_call_line(4, "nonexistent", "{}"),
        tool_call_line(5, "walk", '{"action": "open", "node_id": 1.5}'),
        tool_call_line(6, "context", '{"query": "x\\u0000"}'),
        tool_call_line(7, "read", "{}"),
    ]
    texts = _texts(wire_replies(real_db, "desk", lines, set(range(1, 8))), range(1, 8))
    for text in texts.values():
        assert CODED.match(text), text
    assert "Traceback" not in "".join(texts.values())


def test_a_batch_line_gets_a_reply(real_db):
    create_token(name="desk", domains=["personal"])
    batch = json.dumps(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        ]
    )
    replies = wire_replies(real_db, "desk", [batch], {None})
    assert replies[None]["error"]["code"] == -32600
