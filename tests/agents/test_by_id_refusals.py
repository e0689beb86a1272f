"""Every by-id operation refuses a sealed, a decayed and a missing id alike: the same 404, by
the same queries in the same order, so neither the answer nor the work tells them apart."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.sleep.decay import decay
from review.ceremony import seal
from tests._helpers.agents import make_agent

BY_ID = ("nodes/{}", "nodes/{}/authority", "nodes/{}/questions")
POSTED = (("nodes/{}/propose", {"reason": "x"}), ("nodes/{}/extract", {"start": 0, "end": 3}))


@pytest.fixture
def three(make_note, stale_note):
    """A sealed id, a decayed id and a missing one, all in the agent's domain."""
    sealed = make_note("A sealed word.")
    seal(sealed.pk, owner="owner")
    decay()
    stale_note.refresh_from_db()
    assert stale_note.decayed_at is not None  # the fixture holds a decayed node
    return {"sealed": sealed.pk, "decayed": stale_note.pk, "missing": stale_note.pk + 1000}


def _shape(sql: str) -> str:
    """A statement with its literals blanked: the work done, not the id it was done for."""
    return re.sub(r"\b\d+\b", "?", re.sub(r"'[^']*'", "'?'", sql))


def _queries(agent, path: str, body=None) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as ctx:
        response = agent.get(path) if body is None else agent.post(path, body)
    return response.status_code, [_shape(q["sql"]) for q in ctx.captured_queries]


def test_a_decayed_node_has_no_questions_to_show(client, three):
    agent = make_agent(client, name="w", domains=("personal",))
    assert agent.get(f"nodes/{three['decayed']}").status_code == 404
    assert agent.get(f"nodes/{three['decayed']}/questions").status_code == 404


@pytest.mark.parametrize("path", BY_ID)
def test_sealed_decayed_and_missing_take_the_same_queries_on_a_read(client, three, path):
    agent = make_agent(client, name="w", domains=("personal",))
    agent.get("nodes/1")  # the token's first use records itself once; the rest are alike
    seen = {what: _queries(agent, path.format(pk)) for what, pk in three.items()}
    assert {status for status, _ in seen.values()} == {404}
    assert seen["sealed"][1] == seen["missing"][1] == seen["decayed"][1]


@pytest.mark.parametrize(("path", "body"), POSTED)
def test_sealed_decayed_and_missing_take_the_same_queries_on_a_write(client, three, path, body):
    agent = make_agent(client, name="w", domains=("personal",))
    agent.get("nodes/1")
    seen = {what: _queries(agent, path.format(pk), body) for what, pk in three.items()}
    assert {status for status, _ in seen.values()} == {404}
    assert seen["sealed"][1] == seen["missing"][1] == seen["decayed"][1]
