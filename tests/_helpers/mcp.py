"""An MCP client session (the mcp package's own stdio client) against `manage.py mcp --token`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from django.conf import settings
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests._helpers.aio import run_async
from tests._helpers.realdb import database_env


def server_params(db: Path | str, token: str) -> StdioServerParameters:
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


def mcp_session(db: Path | str, token: str, script):
    """Run `script(session)` inside a live MCP session; returns what it returns."""

    async def main():
        async with (
            stdio_client(server_params(db, token)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await script(session)

    return run_async(main)


def tool_data(result) -> dict:
    """A tool call's answer, after checking it is not an error."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


INIT_LINE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
)


def tool_call_line(ident: int, tool: str, arguments: str) -> str:
    """A raw tools/call line; `arguments` is JSON text, so it may hold what json.dumps cannot."""
    params = f'{{"name": "{tool}", "arguments": {arguments}}}'
    return f'{{"jsonrpc": "2.0", "id": {ident}, "method": "tools/call", "params": {params}}}'


def wire_replies(db, token: str, lines: list[str], wanted: set) -> dict:
    """Send raw lines to `manage.py mcp --token` after the handshake and read reply lines until
    every id in `wanted` has one; a batch reply (a JSON array) counts each of its members. The
    timer only guards against a hang, it asserts nothing about speed."""
    import subprocess
    import threading

    env = {**os.environ, **server_params(db, token).env}
    script = [INIT_LINE, '{"jsonrpc": "2.0", "method": "notifications/initialized"}']
    replies: dict = {}
    with subprocess.Popen(
        [sys.executable, "manage.py", "mcp", "--token", token],
        cwd=settings.BASE_DIR,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        server.stdin.write("\n".join(script + lines) + "\n")
        server.stdin.flush()
        guard = threading.Timer(120, server.kill)
        guard.start()
        while ({0} | wanted) - set(replies):
            line = server.stdout.readline()
            assert line, f"the server closed without answering {sorted(wanted - set(replies))}"
            reply = json.loads(line)
            for member in reply if isinstance(reply, list) else [reply]:
                replies[member.get("id")] = member
        guard.cancel()
        server.stdin.close()
        replies["stderr"] = server.stderr.read()
        server.wait(timeout=60)
    return replies
