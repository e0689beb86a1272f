"""The agents' stdio door (MCP): the same scoped operations as the JSON API, as tools.

`manage.py mcp --token NAME` runs it with that token's scope; the owner starts it locally (an MCP
client such as Claude Desktop launches the command), so the token is named, not presented: its
secret never needs to leave the database. The token is re-checked on every call, so revoking it
stops a running session at its next tool call. Every tool error comes back as "code: message":
Grove's refusals with their own code, arguments the tool schema refuses as bad_field (integers
are strict: true, 1.5 and "1" are not integers), an unknown tool as unknown_tool, and a crash as
server_error (its traceback stays in the server's log).

The protocol library's parser (pydantic's jiter) drops, without a reply, any line it cannot read:
a lone surrogate escape or an integer past 4,300 digits left the client waiting forever.
serve_stdio screens each line first: what the library would drop is answered here (a tool error
for tools/call, a JSON-RPC error otherwise), and everything else passes through untouched. A batch
(a JSON array) is refused with one Invalid Request error, as JSON-RPC 2.0 answers a batch it
cannot take: MCP removed batching in its 2025-06-18 revision, and the library dropped the line.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from typing import Annotated, Any, Literal

import anyio
import pydantic_core
from django.db import close_old_connections, connections
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from pydantic import Strict, ValidationError

from agents import operations as api
from agents.params import check_text
from memory.errors import GroveError
from memory.models import ApiToken
from memory.tokens import active_token

INSTRUCTIONS = (
    "Grove is the owner's reviewable memory. recall gives previews (never bodies) of live nodes "
    "and says how many forgotten ones also matched and how many the other scope holds "
    "(other_scopes): recall searches home (made here) by default, and imported conversations "
    "and documents are wild, so when home answers little and other_scopes names a count, "
    "recall again with that scope or both; dig looks into the forgotten; read gives a "
    "body and counts as a read (reading a node your dig found brings it back); context gives "
    "the bodies that fit a token budget; remember writes a node that must name its origins "
    "(node ids it came from); commit_turn records an exchange of this conversation; walk moves "
    "along the graph with tickets; propose asks the owner to root a node; ask_question, "
    "question_link and open_questions tend questions. Only the owner roots."
)


# Integers as JSON integers only: pydantic's lax mode reads true as 1 and 1.0 as 1.
Int = Annotated[int, Strict()]
Flag = Annotated[bool, Strict()]


def _coded(error: ToolError) -> str:
    """A tool error's text as "code: message", whichever layer raised it."""
    cause = error.__cause__
    if isinstance(cause, ToolError) and not isinstance(cause, UnexpectedToolError):
        return str(cause)  # Grove's own refusal (_run): already "code: message"
    if isinstance(cause, ValidationError):
        problems = [
            f"{'.'.join(str(part) for part in e['loc']) or 'arguments'}: {e['msg']}"
            for e in cause.errors()
        ]
        return f"bad_field: {'; '.join(problems)}"
    if isinstance(error, UnexpectedToolError):
        return "server_error: the tool failed; the server's log says why"
    if str(error).startswith("Unknown tool"):
        return f"unknown_tool: {error}"
    return f"bad_request: {error}"


class _CodedServer(MCPServer):
    """MCPServer whose tool errors all carry their code (_coded)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            raise UnexpectedToolError(_coded(exc)) from exc.__cause__
        except ToolError as exc:
            raise ToolError(_coded(exc)) from exc.__cause__


# Set by the HTTP door (agents/mcp_http.py): each request has its own event loop and worker
# threads, so a tool closes its thread's database connections when done rather than leave them
# to a thread that ends with the request.
ONE_CALL_CONNECTIONS: ContextVar[bool] = ContextVar("grove_mcp_one_call", default=False)


def _run[T](name: str, operation: Callable[[ApiToken], T]) -> T:
    """Run one operation with the live token (re-read: revocation bites at once), turning a
    refusal into a tool error the model can read."""
    # Tools run on worker threads; drop connections the database may have closed under us.
    close_old_connections()
    try:
        return operation(active_token(name=name))
    except GroveError as exc:
        raise ToolError(f"{exc.code}: {exc.message}") from exc
    finally:
        if ONE_CALL_CONNECTIONS.get():
            connections.close_all()


def build_server(*, token_name: str) -> MCPServer:
    """An MCP server whose tools act as the named token (scope, read-only, actor)."""
    server = _CodedServer(name="grove", instructions=INSTRUCTIONS)
    _add_write_tools(server, token_name)
    _add_read_tools(server, token_name)
    _add_question_tools(server, token_name)
    return server


def _add_write_tools(server: MCPServer, token_name: str) -> None:
    """remember, commit_turn, propose and extract: refused for a read-only token."""

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
    def propose(node_id: Int, reason: str = "") -> dict[str, Any]:
        """Ask the owner to root (adopt as ground) a node. Only the owner decides."""
        return _run(token_name, lambda token: api.propose(token, node_id, {"reason": reason}))

    @server.tool()
    def extract(node_id: Int, start: Int, end: Int) -> dict[str, Any]:
        """Make the words body[start:end] of a node (character offsets, end excluded) a node of
        their own, verbatim, nested in it (walk deeper/shallower between them)."""
        data = {"start": start, "end": end}
        return _run(token_name, lambda token: api.extract_part(token, node_id, data)[1])


def _add_read_tools(server: MCPServer, token_name: str) -> None:
    """recall, dig, read, context and walk (read and context count as reads)."""

    @server.tool()
    def recall(
        query: str,
        scope: Literal["home", "wild", "both"] = "home",
        limit: Int = 10,
        as_of: str = "",
        why: Flag = False,
        domain: str = "",
    ) -> dict[str, Any]:
        """Previews of live nodes for a query, best first: jurisdiction, id, trust, kind, excerpt,
        source. Never bodies (use read). scope: home (made here), wild (brought in) or both.
        domain: one of your token's domains, or several comma-separated, to search only those
        (empty: all of them). why: each preview also says briefly why it was found (words,
        vector, via #id, date). other_scopes: how many live nodes the scope you did not search
        also matched, e.g. {"wild": 40}; imported conversations, transcripts and documents are
        wild, so when the results do not answer and other_scopes names a count, recall again with
        that scope (or both). forgotten_matches: how many forgotten (decayed) nodes also matched;
        when it is above 0 and the results do not answer, call dig."""
        return _run(
            token_name,
            lambda token: api.recall_packets(
                token,
                q=query,
                scope=scope,
                domain=domain or None,
                limit=limit,
                as_of=as_of or None,
                why=why,
            ),
        )

    @server.tool()
    def dig(
        query: str,
        scope: Literal["home", "wild", "both"] = "home",
        limit: Int = 10,
        why: Flag = False,
        domain: str = "",
    ) -> dict[str, Any]:
        """Previews of forgotten (decayed) nodes for a query, ranked as recall ranks, each with
        decayed_at and decayed_why (why it was let go, in words). Dig when recall found nothing
        good enough or says forgotten_matches > 0 for what you need. Digging brings nothing
        back; reading a node you dug up (read) brings it back, with what it holds. Logged. domain:
        as recall's."""
        return _run(
            token_name,
            lambda token: api.dig_packets(
                token, q=query, scope=scope, domain=domain or None, limit=limit, why=why
            ),
        )

    @server.tool()
    def read(node_id: Int) -> dict[str, Any]:
        """The full body of one node (counts as a read). A forgotten node found by your own dig
        within a day is brought back by reading it; otherwise forgotten ids are not_found."""
        return _run(token_name, lambda token: api.read_node(token, node_id))

    @server.tool()
    def context(
        query: str,
        budget: Int = 2000,
        scope: Literal["home", "wild", "both"] = "home",
        domain: str = "",
    ) -> dict[str, Any]:
        """Bodies for a query that fit a budget in approximate tokens (characters / 4), best
        first. Each body returned counts as a read. scope home (the default) leaves out what
        was brought in (wild: imported conversations, documents): use both when unsure. domain:
        as recall's."""
        return _run(
            token_name,
            lambda token: api.context(
                token, q=query, budget=budget, scope=scope, domain=domain or None
            ),
        )

    @server.tool()
    def walk(
        action: Literal["open", "around", "step", "read"],
        node_id: Int = 0,
        ticket: str = "",
        direction: str = "",
        target: Int = 0,
    ) -> dict[str, Any]:
        """Walk the graph. open(node_id) -> ticket; around(ticket) -> neighbours with routes;
        step(ticket, direction in/out/next/prev/deeper/shallower, target) -> new ticket;
        read(ticket) -> body. deeper/shallower follow nests edges to extracts and back."""
        by_action: dict[str, dict[str, Any]] = {
            "open": {"node_id": node_id},
            "around": {"ticket": ticket},
            "read": {"ticket": ticket},
            "step": {"ticket": ticket, "direction": direction, "target": target},
        }
        return _run(token_name, lambda token: api.walk(token, action, by_action[action]))


def _add_question_tools(server: MCPServer, token_name: str) -> None:
    """ask_question, question_link and open_questions (memory/questions.py through
    agents/operations.py)."""

    @server.tool()
    def ask_question(body: str, about: list[Int], domain: str = "") -> dict[str, Any]:
        """Plant an open question about nodes (ids). Answering it never makes anything true."""
        fields = {"body": body, "about": about, "domain": domain}
        return _run(token_name, lambda token: api.ask_question(token, fields)[1])

    @server.tool()
    def question_link(
        question_id: Int, act: Literal["feed", "answer", "reopen"], node_id: Int
    ) -> dict[str, Any]:
        """act "feed" (the node bears on the question), "answer" (it answers it) or "reopen"
        (it reopens an answered question)."""
        return _run(
            token_name,
            lambda token: api.link_question(token, question_id, act, {"node": node_id}),
        )

    @server.tool()
    def open_questions(node_id: Int) -> dict[str, Any]:
        """Open questions about or fed by a node (previews)."""
        return _run(token_name, lambda token: api.open_questions(token, node_id))

    @server.tool()
    def waiting() -> dict[str, Any]:
        """How much waits for your owner's review in your domains (proposals, the oldest's age
        in days, how many are yours) and a sentence to tell them, e.g. "241 items waiting for
        your review, the oldest for 56 days." Reading it changes nothing."""
        return _run(token_name, api.waiting_for_owner)


# --- the stdio transport, screened -----------------------------------------------------------


MAX_INT_DIGITS = 4300  # Python's own limit for int(str), which the protocol parser also keeps


def _refusal(line: str) -> str | None:
    """The reply for a line the protocol parser would drop silently, or None to pass it on."""
    if not line.strip():
        return None
    try:
        if not isinstance(pydantic_core.from_json(line), list):
            return None
        refusal = {"code": -32600, "message": "invalid_request: batches are not supported"}
        return json.dumps({"jsonrpc": "2.0", "id": None, "error": refusal}) + "\n"
    except ValueError:
        pass
    long_numbers: list[str] = []

    def number(digits: str) -> int | None:
        if len(digits) > MAX_INT_DIGITS:
            long_numbers.append(digits)
            return None  # no value, so an id this long is not answered as some other id
        return int(digits)

    try:
        message = json.loads(line, parse_int=number)
        check_text(message)
        code, text = "malformed_json", "the message is not JSON the protocol can read"
        if long_numbers:
            code, text = "bad_number", f"a number has more than {MAX_INT_DIGITS} digits"
    except RecursionError:
        message, code, text = None, "malformed_json", "the message nests too deeply"
    except ValueError:
        message, code, text = None, "malformed_json", "the message is not JSON"
    except GroveError as exc:
        code, text = exc.code, exc.message
    request = message if isinstance(message, dict) else {}
    ident = request.get("id")
    ident = (
        ident if isinstance(ident, int) or (isinstance(ident, str) and ident.isascii()) else None
    )
    if request.get("method") == "tools/call" and ident is not None:
        reply: dict[str, Any] = {
            "result": {"content": [{"type": "text", "text": f"{code}: {text}"}], "isError": True}
        }
    else:
        reply = {"error": {"code": -32700, "message": f"{code}: {text}"}}
    return json.dumps({"jsonrpc": "2.0", "id": ident, **reply}) + "\n"


class _Wire:
    """The protocol's stdout: one lock so a whole line is written and flushed at a time, by the
    library's writer or by the screen's refusals."""

    def __init__(self, binary: io.BufferedWriter) -> None:
        self._file = anyio.wrap_file(io.TextIOWrapper(binary, encoding="utf-8"))
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._file.write(text)
            await self._file.flush()

    async def flush(self) -> None:
        return None


class _Screened:
    """stdin lines, with the ones the parser would drop answered on the wire instead."""

    def __init__(self, binary: io.BufferedReader, wire: _Wire) -> None:
        text = io.TextIOWrapper(binary, encoding="utf-8", errors="replace")
        self._lines = anyio.wrap_file(text)
        self._wire = wire

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            if (reply := _refusal(line)) is None:
                yield line
            else:
                await self._wire.write(reply)


def serve_stdio(server: MCPServer) -> None:
    """Run the server on stdin/stdout through the screen. As the library does, the wire gets
    private descriptors and fds 0/1 point at /dev/null and stderr, so stray output misses it."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    wire = _Wire(wire_out)

    async def main() -> None:
        async with stdio_server(_Screened(wire_in, wire), wire) as (read, write):  # type: ignore[arg-type]
            lowlevel = server._lowlevel_server
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(main)
