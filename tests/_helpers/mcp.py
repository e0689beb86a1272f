"""An MCP client session (the mcp package's own stdio client) against `manage.py mcp --token`."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx2
from django.conf import settings
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

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


# --- MCP over HTTP: the real `serve` process and the official Streamable HTTP client ---------


@contextlib.contextmanager
def grove_server(db: Path | str, tmp_path: Path):
    """`manage.py serve --no-worker` on a free port, on the test's database; yields its /mcp URL
    once it answers, and stops its process group afterwards."""
    from tests._helpers.processes import free_port
    from tests._helpers.wait import wait_for

    port = free_port()
    env = {**os.environ, **database_env(db), "GROVE_DATA_DIR": str(settings.DATA_DIR)}
    log = open(tmp_path / "serve.log", "w")  # noqa: SIM115
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--no-worker", "--port", str(port)],
        cwd=str(settings.BASE_DIR),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(lambda: _answers(port) or server.poll() is not None, timeout=60)
        assert server.poll() is None, (tmp_path / "serve.log").read_text()
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 2):
        return True
    return False


def mcp_http_session(url: str, secret: str, script):
    """Run `script(session)` inside a session of the official Streamable HTTP client, sending
    `Authorization: Bearer <secret>`; returns what it returns."""

    async def main():
        headers = {"Authorization": f"Bearer {secret}"}
        async with (
            # The SDK's own client waits 30 s (httpx's default, 5 s, is short on a busy machine).
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0)) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await script(session)

    return run_async(main)
