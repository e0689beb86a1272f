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
