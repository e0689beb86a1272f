"""MCP over HTTP in this process: /mcp through Django's test client (the SDK's stateless JSON
transport inside the view), so the view's own rules are tested where mutation testing sees them
(tests/agents/test_mcp_http.py drives the real `serve` process with the official client)."""

from __future__ import annotations

import json

import anyio
import pytest
from django.http import HttpRequest

from agents import mcp_server
from agents.mcp_http import _Exchange, _scope
from memory.models import Node
from memory.tokens import create_token, revoke_token
from memory.write import write_node
from tests._helpers.aio import outside_any_loop

# The tools run on worker threads with their own connections: what they read must be committed.
pytestmark = pytest.mark.django_db(transaction=True)

ACCEPT = "application/json, text/event-stream"


@pytest.fixture(autouse=True)
def _outside_the_sessions_loop():
    with outside_any_loop():
        yield


def _post(client, secret: str | None, message: dict | list, **headers):
    if secret is not None:
        headers["Authorization"] = f"Bearer {secret}"
    return client.post(
        "/mcp",
        data=json.dumps(message),
        content_type="application/json",
        headers={"Accept": ACCEPT, **headers},
    )


def _call(ident: int, tool: str, arguments: dict) -> dict:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


@pytest.fixture
def seed() -> Node:
    return write_node(
        body="The heat pump filter is cleaned in October.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="house.md",
    ).node


def test_a_tool_call_needs_no_handshake_and_keeps_no_session(client, seed):
    _, secret = create_token(name="desk", domains=["personal"])
    response = _post(client, secret, _call(7, "read", {"node_id": seed.pk}))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert "mcp-session-id" not in {name.lower() for name in response.headers}
    reply = response.json()
    assert reply["id"] == 7 and not reply["result"]["isError"]
    assert reply["result"]["structuredContent"]["body"] == seed.body


def test_the_transports_own_headers_pass_and_the_framing_ones_do_not(client, seed):
    _, secret = create_token(name="desk", domains=["personal"])
    response = _post(client, secret, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    names = {name.lower() for name in response.headers}
    assert "content-type" in names
    assert not names & {"connection", "transfer-encoding"}
    assert int(response.get("Content-Length", len(response.content))) == len(response.content)


@pytest.mark.parametrize("presented", [None, "not-a-grove-token", "revoked"])
def test_a_missing_unknown_or_revoked_token_is_a_json_rpc_401(client, presented):
    _, secret = create_token(name="gone", domains=["personal"])
    revoke_token(name="gone")
    response = _post(
        client, secret if presented == "revoked" else presented, _call(1, "waiting", {})
    )
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="grove"'
    body = response.json()
    assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", None, -32001)
    assert body["error"]["message"]


def test_a_token_revoked_between_calls_stops_at_the_next(client, seed):
    _, secret = create_token(name="desk", domains=["personal"])
    assert not _post(client, secret, _call(1, "waiting", {})).json()["result"]["isError"]
    revoke_token(name="desk")
    assert _post(client, secret, _call(2, "waiting", {})).status_code == 401


@pytest.mark.parametrize("method", ["get", "delete", "put"])
def test_only_post_is_answered(client, method):
    _, secret = create_token(name="desk", domains=["personal"])
    response = getattr(client, method)(
        "/mcp", headers={"Authorization": f"Bearer {secret}", "Accept": "text/event-stream"}
    )
    assert response.status_code == 405


def test_a_body_past_the_request_limit_is_refused_before_any_tool_runs(client, seed, settings):
    settings.GROVE_MAX_REQUEST_BYTES = 2_000
    _, secret = create_token(name="desk", domains=["personal"])
    origins = [{"id": seed.pk}]
    small = _post(client, secret, _call(1, "remember", {"body": "ok", "origins": origins}))
    assert not small.json()["result"]["isError"]
    big = _post(client, secret, _call(2, "remember", {"body": "x" * 3_000, "origins": origins}))
    assert big.status_code == 413
    assert not Node.objects.filter(body="x" * 3_000).exists()


def test_the_tokens_domains_and_read_only_hold_over_http(client, seed):
    work = write_node(
        body="The heat pump contract.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="work.md",
        domain="work",
    ).node
    _, secret = create_token(name="reader", domains=["personal"], read_only=True)
    read = _post(client, secret, _call(1, "read", {"node_id": work.pk})).json()["result"]
    assert read["isError"] and read["content"][0]["text"].startswith("not_found: ")
    wrote = _post(client, secret, _call(2, "remember", {"body": "x", "origins": [{"id": seed.pk}]}))
    assert wrote.json()["result"]["content"][0]["text"].startswith("read_only: ")


def test_a_call_over_http_closes_its_threads_connections_and_one_over_stdio_keeps_them(
    client, seed, monkeypatch
):
    closed: list[bool] = []
    close_all = mcp_server.connections.close_all
    monkeypatch.setattr(
        mcp_server.connections, "close_all", lambda: closed.append(True) or close_all()
    )
    _, secret = create_token(name="desk", domains=["personal"])
    anyio.run(mcp_server.build_server(token_name="desk").call_tool, "waiting", {})
    assert closed == []
    _post(client, secret, _call(1, "waiting", {}))
    assert closed == [True]


def test_the_transport_sees_the_request_as_it_came(rf):
    request = rf.post(
        "/mcp?probe=1",
        data=b"{}",
        content_type="application/json",
        headers={"Accept": ACCEPT, "X-Note": "caf\u00e9"},
        REMOTE_ADDR="10.0.0.2",
    )
    scope = _scope(request)
    headers = scope.pop("headers")
    assert scope == {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"probe=1",
        "server": ("testserver", 80),
        "client": ("10.0.0.2", 0),
    }
    assert (b"accept", ACCEPT.encode()) in headers
    assert (b"x-note", b"caf\xe9") in headers
    assert (b"content-type", b"application/json") in headers


def test_a_request_without_a_query_string_client_or_server_name_has_empty_ones(settings):
    request = HttpRequest()
    request.method = "POST"
    request.META = {"SERVER_PORT": "8341"}
    scope = _scope(request)
    assert (scope["query_string"], scope["client"]) == (b"", ("", 0))
    assert (scope["server"], scope["headers"]) == (("", 8341), [])


def test_a_host_outside_allowed_hosts_is_refused_before_the_transport(client):
    _, secret = create_token(name="desk", domains=["personal"])
    response = _post(client, secret, _call(1, "waiting", {}), Host="evil.example")
    assert response.status_code == 400


def test_a_host_django_allows_is_answered_even_where_the_sdk_would_check_hosts_itself(
    client, monkeypatch
):
    """Django owns the Host check. The SDK's check is off only by its middleware's fallback for
    no settings ("for backwards compatibility"); its settings' own default is on, with no host
    allowed, which would refuse every Host Django lets through (421)."""
    from mcp.server import transport_security

    def checking_by_default(
        self: transport_security.TransportSecurityMiddleware,
        settings: transport_security.TransportSecuritySettings | None = None,
    ) -> None:
        self.settings = settings or transport_security.TransportSecuritySettings()

    monkeypatch.setattr(
        transport_security.TransportSecurityMiddleware, "__init__", checking_by_default
    )
    _, secret = create_token(name="desk", domains=["personal"])
    response = _post(client, secret, _call(1, "waiting", {}), Origin="http://testserver")
    assert response.status_code == 200
    assert not response.json()["result"]["isError"]


def test_the_body_is_received_once_and_then_the_transport_waits():
    exchange = _Exchange(b"{}")

    async def main():
        first = await exchange.receive()
        with anyio.move_on_after(0.2) as waited:
            await exchange.receive()
        return first, waited.cancelled_caught

    first, waited = anyio.run(main)
    assert first == {"type": "http.request", "body": b"{}", "more_body": False}
    assert waited


def test_the_answer_is_collected_as_the_transport_sends_it():
    exchange = _Exchange(b"")
    assert (exchange.status, exchange.headers, exchange.body) == (500, [], b"")
    start = {"type": "http.response.start", "status": 202, "headers": [(b"x-note", b"caf\xe9")]}

    async def main():
        await exchange.send(start)
        for message in ({"body": b"ab"}, {}, {"body": b"cd"}):
            await exchange.send({"type": "http.response.body", **message})
        await exchange.send({"type": "http.response.trailers", "body": b"no"})

    anyio.run(main)
    assert (exchange.status, exchange.headers, exchange.body) == (
        202,
        [("x-note", "caf\u00e9")],
        b"abcd",
    )
