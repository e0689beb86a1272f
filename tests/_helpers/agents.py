"""Helpers for the agent API tests: a token and a Django test client speaking JSON over HTTP."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.test import Client

from memory.models import ApiToken
from memory.tokens import create_token


@dataclass
class Agent:
    client: Client
    secret: str
    token: ApiToken

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.secret}"}

    def post(self, path: str, data: Any = None, *, raw: bytes | str | None = None):
        body = raw if raw is not None else json.dumps(data if data is not None else {})
        return self.client.post(
            f"/api/v1/{path}", data=body, content_type="application/json", headers=self.auth
        )

    def get(self, path: str, params: dict[str, Any] | None = None):
        return self.client.get(f"/api/v1/{path}", params or {}, headers=self.auth)


def make_agent(
    client: Client, *, name: str = "scout", domains=("personal",), read_only: bool = False
) -> Agent:
    token, secret = create_token(name=name, domains=list(domains), read_only=read_only)
    return Agent(client, secret, token)


def error_of(response) -> str:
    """The refusal's code, after checking it has the documented JSON shape."""
    payload = response.json()
    assert set(payload) == {"error"} and set(payload["error"]) == {"code", "message"}
    assert payload["error"]["message"]
    return payload["error"]["code"]


def write_note(agent: Agent, origin, /, **fields):
    """POST a note derived from `origin` through the API; `fields` override the defaults."""
    data = {
        "body": "The boiler is serviced in March.",
        "kind": "note",
        "jurisdiction": "home",
        "signature": "scout",
        "origins": [{"id": origin.pk, "relation": "derived_from"}],
    }
    return agent.post("nodes", {**data, **fields})
