"""Hostile lines on the MCP wire: every request gets an answer (a tool error), none hangs, and
nothing is stored. Raw JSON lines, as a hostile client would write them (issue 12)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from django.conf import settings

from memory.models import Node
from memory.tokens import create_token
from tests._helpers.realdb import database_env

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


def _call(ident: int, tool: str, arguments: str) -> str:
    params = f'{{"name": "{tool}", "arguments": {arguments}}}'
    return f'{{"jsonrpc": "2.0", "id": {ident}, "method": "tools/call", "params": {params}}}'


def _replies(db, lines: list[str]) -> dict[int, dict]:
    """Send the lines, then read replies until every request id has one (the reader's timeout
    only guards against a hang; it asserts nothing about speed)."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "grove.settings",
        **database_env(db),
        "GROVE_DATA_DIR": str(settings.DATA_DIR),
        # Beside the SQLite file; PostgreSQL's database has no directory: the test's own.
        "GROVE_SCROLL_DIR": str(
            db.parent / "scroll" if isinstance(db, Path) else settings.GROVE_SCROLL_DIR
        ),
    }
    wanted = {0} | set(range(1, len(lines) + 1))
    script = [json.dumps(INIT), '{"jsonrpc": "2.0", "method": "notifications/initialized"}']
    with subprocess.Popen(
        [sys.executable, "manage.py", "mcp", "--token", "desk"],
        cwd=settings.BASE_DIR,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as server:
        server.stdin.write("\n".join(script + lines) + "\n")
        server.stdin.flush()
        # A server that never answers is killed, so the test fails instead of hanging.
        guard = threading.Timer(120, server.kill)
        guard.start()
        replies: dict[int, dict] = {}
        while wanted - set(replies):
            line = server.stdout.readline()
            assert line, f"the server closed without answering {sorted(wanted - set(replies))}"
            reply = json.loads(line)
            replies[reply.get("id")] = reply
        guard.cancel()
        server.stdin.close()
        server.wait(timeout=60)
    return replies


def test_every_hostile_tool_call_gets_a_tool_error(real_db):
    create_token(name="desk", domains=["personal"])
    lines = [
        _call(1, "remember", '{"body": "a\\ud800b", "origins": []}'),
        _call(2, "recall", '{"query": "x\\udfff"}'),
        _call(3, "context", '{"query": "x", "budget": ' + "9" * 5000 + "}"),
        _call(4, "read", '{"node_id": 99999999999999999999999}'),
        _call(5, "recall", '{"query": "x", "as_of": "9999-12-31T23:59:59-01:00"}'),
        _call(6, "walk", '{"action": "open", "node_id": 1e400}'),
        _call(7, "propose", '{"node_id": 1, "reason": "\\udc00"}'),
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
        real_db, [_call(1, "extract", f'{{"node_id": {seed.pk}, "start": 10, "end": 42}}')]
    )
    assert not replies[1]["result"].get("isError"), replies[1]
    child = Node.objects.get(metadata__extract__parent=seed.pk)
    assert child.body == "the boiler is serviced in March."
