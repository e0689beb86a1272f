"""Property: whatever JSON and unicode an agent sends, the API answers JSON with a 2xx or 4xx,
never a 5xx, and a 4xx stores nothing (rows, FTS and scroll files unchanged). Hypothesis drives
every endpoint with valid payloads mutated by arbitrary fields and values, and with raw bodies."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._helpers.agents import make_agent

# Any unicode, lone surrogates (category Cs) well represented: json.dumps escapes them as \udXXX.
TEXT = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])), max_size=40)
INSTANTS = st.sampled_from(
    [
        "2024-05-08T13:56:00+02:00",
        "2024-05-08T13:56:00",
        "0001-01-01T00:00:00+01:00",
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59-01:00",
        "9999-12-31T23:59:59Z",
        "yesterday",
    ]
)
NUMBERS = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, -1, 1, 2, 2**63, 2**64, 10**30]),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT, INSTANTS)
# Bare tokens Python's json accepts but no field may hold, spliced into a body as raw text.
TOKENS = st.sampled_from(["Infinity", "-Infinity", "NaN", "1e400", "-1e400", "9" * 5000])
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12,
)
FIELDS = [
    "body", "kind", "jurisdiction", "signature", "origins", "source", "domain",
    "referent_time", "metadata", "q", "budget", "scope", "limit", "as_of", "node_id",
    "ticket", "direction", "target", "reason", "conversation", "user", "assistant", "start", "end",
]  # fmt: skip


def _base(endpoint: str, seed: int, ticket: str) -> dict:
    origin = [{"id": seed, "relation": "derived_from"}]
    return {
        "nodes": {"body": "The boiler hums.", "kind": "note", "jurisdiction": "home",
                  "signature": "scout", "origins": origin},
        "turns": {"conversation": "kitchen", "user": "hi", "assistant": "hello"},
        "recall": {"q": "boiler"},
        "context": {"q": "boiler", "budget": 100},
        "read": {},
        "propose": {"reason": "it holds"},
        "extract": {"start": 0, "end": 4},
        "walk/open": {"node_id": seed},
        "walk/around": {"ticket": ticket},
        "walk/read": {"ticket": ticket},
        "walk/step": {"ticket": ticket, "direction": "out", "target": seed},
    }[endpoint]  # fmt: skip


ENDPOINTS = [
    "nodes", "turns", "recall", "context", "read", "propose", "extract",
    "walk/open", "walk/around", "walk/read", "walk/step",
]  # fmt: skip


@pytest.fixture
def scene(client, db, root_note, tmp_path, settings):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    agent = make_agent(client, name="fuzz", domains=["personal"])
    ticket = agent.post("walk/open", {"node_id": root_note.pk}).json()["ticket"]
    return agent, root_note.pk, ticket, settings.GROVE_SCROLL_DIR


def _nested(depth: int) -> str:
    return "[" * depth * 40 + "]" * depth * 40


def _spliced(payload: dict, splice: tuple[str, str] | None) -> str | None:
    """The payload as JSON text with one more field holding a raw token (None: no splice)."""
    if splice is None:
        return None
    text = json.dumps({k: v for k, v in payload.items() if k != splice[0]})
    return text[:-1] + ("," if len(text) > 2 else "") + f' "{splice[0]}": {splice[1]}}}'


def _scrolls(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in folder.glob("*")} if folder.exists() else {}


def _send(agent, endpoint: str, seed: int, payload, raw: str | None):
    if endpoint in ("recall", "read"):
        params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in payload.items()}
        path = f"nodes/{seed}" if endpoint == "read" else "recall"
        # As a client on the wire would: lone surrogates go out as their (invalid) UTF-8 bytes.
        query = urlencode(params, encoding="utf-8", errors="surrogatepass")
        return agent.client.get(f"/api/v1/{path}?{query}", headers=agent.auth)
    path = f"nodes/{seed}/{endpoint}" if endpoint in ("propose", "extract") else endpoint
    body = raw if raw is not None else json.dumps(payload)
    # A raw body with a lone surrogate goes out as its (invalid) UTF-8 bytes too: the test
    # client's own strict encoding would fail before the request left (a flaky example).
    return agent.post(path, raw=body.encode("utf-8", errors="surrogatepass"))


@settings(
    max_examples=int(os.environ.get("GROVE_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    endpoint=st.sampled_from(ENDPOINTS),
    changes=st.dictionaries(st.one_of(st.sampled_from(FIELDS), TEXT), JSON, max_size=3),
    drop=st.sets(st.sampled_from(FIELDS), max_size=2),
    splice=st.one_of(st.none(), st.tuples(st.sampled_from(FIELDS), TOKENS)),
    raw=st.one_of(st.none(), st.none(), st.none(), TEXT, st.integers(1, 3000).map(_nested)),
)
def test_every_answer_is_json_2xx_or_4xx_and_a_refusal_stores_nothing(
    scene, counts, endpoint, changes, drop, splice, raw
):
    agent, seed, ticket, scroll = scene
    payload = {k: v for k, v in _base(endpoint, seed, ticket).items() if k not in drop}
    payload.update(changes)
    raw = raw if raw is not None else _spliced(payload, splice)
    before, files = counts(), _scrolls(scroll)
    response = _send(agent, endpoint, seed, payload, raw)
    assert response.status_code < 500, (endpoint, payload, raw, response.content[:300])
    assert response["Content-Type"] == "application/json"
    answer = response.json()
    if response.status_code >= 400:
        assert set(answer) == {"error"}, answer
        assert (counts(), _scrolls(scroll)) == (before, files), (endpoint, payload, raw)
