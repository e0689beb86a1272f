"""The agents' stdio door (MCP): the same scoped operations as the JSON API, as tools.

`manage.py mcp --token NAME` runs it with that token's scope; the owner starts it locally (an MCP
client such as Claude Desktop launches the command), so the token is named, not presented: its
secret never needs to leave the database. The token is re-checked on every call, so revoking it
stops a running session at its next tool call. Refusals come back as tool errors "code: message".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from django.db import close_old_connections
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from agents import operations as api
from memory.errors import GroveError
from memory.models import ApiToken
from memory.tokens import active_token

INSTRUCTIONS = (
    "Grove is the owner's reviewable memory. recall gives previews (never bodies); read gives a "
    "body and counts as a read; context gives the bodies that fit a token budget; remember "
    "writes a node that must name its origins (node ids it came from); commit_turn records an "
    "exchange of this conversation; walk moves along the graph with tickets; propose asks the "
    "owner to root a node. Only the owner roots."
)


def _run(name: str, operation: Callable[[ApiToken], Any]) -> Any:
    """Run one operation with the live token (re-read: revocation bites at once), turning a
    refusal into a tool error the model can read."""
    # Tools run on worker threads; drop connections the database may have closed under us.
    close_old_connections()
    try:
        return operation(active_token(name=name))
    except GroveError as exc:
        raise ToolError(f"{exc.code}: {exc.message}") from exc


def build_server(*, token_name: str) -> MCPServer:
    """An MCP server whose tools act as the named token (scope, read-only, actor)."""
    server = MCPServer(name="grove", instructions=INSTRUCTIONS)

    @server.tool()
    def remember(
        body: str,
        origins: list[dict[str, Any]],
        kind: str = "note",
        jurisdiction: str = "home",
        signature: str = "",
        source: str = "",
        domain: str = "",
        referent_time: str = "",
    ) -> dict[str, Any]:
        """Write a node. origins: [{"id": <node id>, "relation": "derived_from"}] (what it came
        from). kind: note, inference, synthesis, hearsay, question, draft ... jurisdiction: home
        (made here) or wild (brought in). referent_time: ISO 8601 with an offset, if known."""
        data = {
            "body": body,
            "origins": origins,
            "kind": kind,
            "jurisdiction": jurisdiction,
            "signature": signature or f"agent:{token_name}",
            "source": source,
            "domain": domain,
            "referent_time": referent_time or None,
        }
        return _run(token_name, lambda token: api.remember(token, data)[1])

    @server.tool()
    def commit_turn(
        conversation: str, user: str, assistant: str, referent_time: str = "", domain: str = ""
    ) -> dict[str, Any]:
        """Record one user/assistant exchange of a conversation (a pair on its scroll)."""
        data = {
            "conversation": conversation,
            "user": user,
            "assistant": assistant,
            "referent_time": referent_time or None,
            "domain": domain,
        }
        return _run(token_name, lambda token: api.commit_turn(token, data)[1])

    @server.tool()
    def recall(
        query: str,
        scope: Literal["home", "wild", "both"] = "home",
        limit: int = 10,
        as_of: str = "",
        why: bool = False,
    ) -> dict[str, Any]:
        """Previews for a query, best first: jurisdiction, id, trust, kind, excerpt, source.
        Never bodies (use read). scope: home (made here), wild (brought in) or both.
        why: each preview also says briefly why it was found (words, vector, via #id, date)."""
        return _run(
            token_name,
            lambda token: api.recall_packets(
                token, q=query, scope=scope, limit=limit, as_of=as_of or None, why=why
            ),
        )

    @server.tool()
    def read(node_id: int) -> dict[str, Any]:
        """The full body of one node (counts as a read)."""
        return _run(token_name, lambda token: api.read_node(token, node_id))

    @server.tool()
    def context(
        query: str, budget: int = 2000, scope: Literal["home", "wild", "both"] = "home"
    ) -> dict[str, Any]:
        """Bodies for a query that fit a budget in approximate tokens (characters / 4), best
        first. Each body returned counts as a read."""
        return _run(
            token_name, lambda token: api.context(token, q=query, budget=budget, scope=scope)
        )

    @server.tool()
    def walk(
        action: Literal["open", "around", "step", "read"],
        node_id: int = 0,
        ticket: str = "",
        direction: str = "",
        target: int = 0,
    ) -> dict[str, Any]:
        """Walk the graph. open(node_id) -> ticket; around(ticket) -> neighbours with routes;
        step(ticket, direction in/out/next/prev, target) -> new ticket; read(ticket) -> body."""
        fields: dict[str, Any] = {
            "open": {"node_id": node_id},
            "around": {"ticket": ticket},
            "read": {"ticket": ticket},
            "step": {"ticket": ticket, "direction": direction, "target": target},
        }[action]
        return _run(token_name, lambda token: api.walk(token, action, fields))

    @server.tool()
    def propose(node_id: int, reason: str = "") -> dict[str, Any]:
        """Ask the owner to root (adopt as ground) a node. Only the owner decides."""
        return _run(token_name, lambda token: api.propose(token, node_id, {"reason": reason}))

    return server
