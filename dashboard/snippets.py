"""Ready-to-paste ways to connect an agent with one token: the MCP configuration of common MCP
hosts and a curl call. MCP hosts launch `manage.py mcp --token NAME` on this machine, so those
snippets name the token and hold no secret; only curl needs the secret, and it carries one only
on the page that minted it (else `$GROVE_TOKEN`).

Each snippet is escaped for its own language by that language's encoder (json, shlex; TOML's
basic strings take JSON's escapes), so a checkout path with spaces or quotes still pastes right.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings


@dataclass(frozen=True)
class Snippet:
    key: str
    title: str
    where: str
    text: str


def _launch(token_name: str) -> tuple[str, list[str], dict[str, str]]:
    """The command an MCP host runs: this checkout's Python, manage.py mcp, the data dir."""
    python = str(Path(sys.executable))
    manage = str(Path(settings.BASE_DIR) / "manage.py")
    env = {"GROVE_DATA_DIR": str(settings.DATA_DIR)}
    return python, [manage, "mcp", "--token", token_name], env


def snippets(token_name: str, *, api_url: str, secret: str = "") -> list[Snippet]:
    """The snippets for one token, for the tokens page: Claude Code's command line, the
    mcpServers JSON of Claude Desktop and Cursor, Codex's config.toml, and curl."""
    python, args, env = _launch(token_name)
    server = {"command": python, "args": args, "env": env}
    env_flags = " ".join(f"-e {shlex.quote(f'{k}={v}')}" for k, v in env.items())
    claude = f"claude mcp add grove {env_flags} -- " + shlex.join([python, *args])
    toml_env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
    codex = (
        "[mcp_servers.grove]\n"
        f"command = {json.dumps(python)}\n"
        f"args = {json.dumps(args)}\n"
        f"env = {{ {toml_env} }}\n"
    )
    bearer = secret or "$GROVE_TOKEN"
    curl = (
        f"curl -sf -G {shlex.quote(api_url.rstrip('/') + '/recall')} \\\n"
        f'  -H "Authorization: Bearer {bearer}" \\\n'
        "  --data-urlencode 'q=what do I know' --data-urlencode 'limit=5'"
    )
    return [
        Snippet("claude-code", "Claude Code", "run once in a terminal", claude),
        Snippet(
            "mcp-json",
            "Claude Desktop, Cursor (mcpServers JSON)",
            "claude_desktop_config.json or .cursor/mcp.json",
            json.dumps({"mcpServers": {"grove": server}}, indent=2),
        ),
        Snippet("codex", "Codex", "~/.codex/config.toml", codex),
        Snippet(
            "curl",
            "curl (JSON API)",
            "a shell" + ("" if secret else " with GROVE_TOKEN set to the secret"),
            curl,
        ),
    ]
