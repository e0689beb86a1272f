from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.mcp_server import build_server, serve_stdio
from memory.errors import GroveError
from memory.tokens import active_token


class Command(BaseCommand):
    help = "Serve Grove's agent tools over MCP (stdio), acting with the named token's scope."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--token", required=True, help="name of an active API token")

    def handle(self, *args: Any, token: str, **options: Any) -> None:
        try:
            active_token(name=token)
        except GroveError as exc:
            raise CommandError(exc.message) from exc
        # stdout is the protocol channel from here on: nothing else may print to it.
        serve_stdio(build_server(token_name=token))
