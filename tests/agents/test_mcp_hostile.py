"""Hostile lines on the MCP wire: every request gets an answer (a tool error), none hangs, and
nothing is stored. Raw JSON lines, as a hostile client would write them."""

from __future__ import annotations

from memory.models import Node
from memory.tokens import create_token
from tests._helpers.mcp import tool_call_line, wire_replies


def _replies(db, lines: list[str]) -> dict:
    """Every request's reply, by id, from a server minted for the token "desk"."""
    return wire_replies(db, "desk", lines, set(range(1, len(lines) + 1)))


def test_every_hostile_tool_call_gets_a_tool_error(real_db):
    create_token(name="desk", domains=["personal"])
    lines = [
        tool_call_line(1, "remember", '{"body": "a\\ud800b", "origins": []}'),
        tool_call_line(2, "recall", '{"query": "x\\udfff"}'),
        tool_call_line(3, "context", '{"query": "x", "budget": ' + "9" * 5000 + "}"),
        tool_call_line(4, "read", '{"node_id": 99999999999999999999999}'),
        tool_call_line(5, "recall", '{"query": "x", "as_of": "9999-12-31T23:59:59-01:00"}'),
        tool_call_line(6, "walk", '{"action": "open", "node_id": 1e400}'),
        tool_call_line(7, "propose", '{"node_id": 1, "reason": "\\udc00"}'),
    ]
    replies = _replies(real_db, lines)
    for ident in range(1, 8):
        assert replies[ident]["result"]["isError"], replies[ident]
    text = {i: replies[i]["result"]["content"][0]["text"] for i in range(1, 8)}
    assert "bad_text" in text[1] and "bad_text" in text[2] and "bad_text" in text[7]
    assert "bad_number" in text[3]
    assert "not_found" in text[4] and "bad_datetime" in text[5]
    assert not Node.objects.exists()


def test_the_extract_tool_nests_a_verbatim_part(real_db):
    from memory.write import write_node

    create_token(name="desk", domains=["personal"])
    seed = write_node(
        body="Notebook: the boiler is serviced in March.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="notebook.md",
    ).node
    replies = _replies(
        real_db, [tool_call_line(1, "extract", f'{{"node_id": {seed.pk}, "start": 10, "end": 42}}')]
    )
    assert not replies[1]["result"].get("isError"), replies[1]
    child = Node.objects.get(metadata__extract__parent=seed.pk)
    assert child.body == "the boiler is serviced in March."
