"""The agents' MCP door over HTTP: the stdio server's tools (agents/mcp_server.py) behind the
JSON API's bearer tokens, at /mcp on Grove's own web server.

Grove serves WSGI (waitress), so the MCP SDK's Streamable HTTP transport runs inside a plain
Django view, one request at a time: the bearer token is checked here, as the JSON API checks it
(a missing, unknown or revoked one is 401 before any MCP is spoken), and the SDK's session manager
then answers that one request in its stateless JSON-response mode (no session to keep between
requests, no SSE stream to hold a WSGI thread). The official client accepts that mode as is: it
sends each message as a POST and reads the JSON reply. Mounting the SDK's ASGI app beside the
WSGI one instead would have needed a second server or a bridge, and its own authentication.

Each token's server is built once and kept (building one takes a tenth of a second: twelve tools'
schemas); its tools re-read the token at every call, as over stdio, so a revocation or a change
of domains bites at once, and scopes, read-only, owner-only acts and domains are the same code as
the stdio door's.
"""

from __future__ import annotations

import functools
from collections.abc import MutableMapping
from typing import Any

import anyio
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from agents.mcp_server import ONE_CALL_CONNECTIONS, build_server
from memory.errors import GroveError
from memory.tokens import authenticate

# Django has already refused a Host outside ALLOWED_HOSTS before this view runs. Said here, not
# left to the SDK: its check is off only by its middleware's fallback for no settings, while its
# settings' own default is on with no host allowed (tests/agents/test_mcp_http_view.py).
_HOSTS_CHECKED = TransportSecuritySettings(enable_dns_rebinding_protection=False)


@csrf_exempt  # bearer-authenticated, as the JSON API: no cookie is ever read here
@login_not_required
# POST only: stateless, there is no session to DELETE, and a GET would open an SSE stream that
# never ends, holding one of the web server's threads for good; 405 is the answer MCP's
# transport names for a server that offers no such stream.
@require_POST
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    """One Streamable HTTP request for the bearer token's MCP server. Refuses (401, with a
    JSON-RPC error body and `WWW-Authenticate: Bearer`) a missing, unknown or revoked token,
    and (405) any method but POST."""
    try:
        token = authenticate(request.headers.get("Authorization"))
    except GroveError as exc:
        refusal = JsonResponse(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": str(exc)}},
            status=exc.status,
        )
        refusal["WWW-Authenticate"] = 'Bearer realm="grove"'
        return refusal
    status, headers, body = anyio.run(_answer, token.name, _scope(request), request.body)
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name.lower() not in {"content-length", "connection", "transfer-encoding"}:
            response[name] = value
    return response


def _scope(request: HttpRequest) -> dict[str, Any]:
    """The ASGI scope of this request, as the SDK's transport reads it."""
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in request.headers.items()
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": headers,
        # The address the server listens on (ASGI), not the Host header, which may name a port.
        "server": (request.META.get("SERVER_NAME", ""), int(request.get_port())),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
    }


@functools.lru_cache(maxsize=64)
def _server(token_name: str) -> MCPServer:
    return build_server(token_name=token_name)


async def _answer(
    token_name: str, scope: dict[str, Any], body: bytes
) -> tuple[int, list[tuple[str, str]], bytes]:
    """Run the SDK's stateless, JSON-response transport for one request; (status, headers,
    body) of its answer."""
    manager = StreamableHTTPSessionManager(
        app=_server(token_name)._lowlevel_server,
        json_response=True,
        stateless=True,
        security_settings=_HOSTS_CHECKED,
        max_request_body_size=settings.GROVE_MAX_REQUEST_BYTES,
    )
    exchange = _Exchange(body)
    token = ONE_CALL_CONNECTIONS.set(True)
    try:
        async with manager.run():
            await manager.handle_request(scope, exchange.receive, exchange.send)
    finally:
        ONE_CALL_CONNECTIONS.reset(token)
    return exchange.status, exchange.headers, exchange.body


class _Exchange:
    """One request's ASGI messages: the body is received once (then receive waits, for a
    disconnect that never comes, which is all the transport listens for), and the response is
    collected as the transport sends it."""

    def __init__(self, body: bytes) -> None:
        self._body: bytes | None = body
        self.status = 500  # if the transport never starts a response
        self.headers: list[tuple[str, str]] = []
        self._chunks: list[bytes] = []

    async def receive(self) -> dict[str, Any]:
        if self._body is None:
            await anyio.sleep_forever()
        body, self._body = self._body, None
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = [
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]
            ]
        elif message["type"] == "http.response.body":
            self._chunks.append(message.get("body", b""))

    @property
    def body(self) -> bytes:
        return b"".join(self._chunks)
