"""Recall's other_scopes: how many live matches the scopes it did not search hold, under the
same visibility (sealed, rejected, other domains and decayed nodes never count)."""

from __future__ import annotations

import pytest

from memory.forgetting import let_go
from review.ceremony import reject, seal
from tests._helpers.agents import make_agent


@pytest.fixture
def agent(client, db):
    return make_agent(client)


@pytest.fixture
def wild(make_note):
    def make(body: str, **fields):
        return make_note(body, jurisdiction="wild", kind="hearsay", **fields)

    return make


def _recall(agent, **params):
    return agent.get("recall", {"q": "lighthouse keeper", **params}).json()


def test_an_empty_home_answer_says_how_many_wild_nodes_matched(agent, wild):
    for n in range(3):
        wild(f"The lighthouse keeper's log, page {n}.")
    answer = _recall(agent)
    assert answer["results"] == []
    assert answer["other_scopes"] == {"wild": 3}


def test_a_wild_recall_counts_home_and_both_counts_nothing(agent, make_note, wild):
    make_note("The lighthouse keeper is my uncle.")
    wild("A lighthouse keeper's memoir.")
    assert _recall(agent, scope="wild")["other_scopes"] == {"home": 1}
    assert _recall(agent, scope="both")["other_scopes"] == {}


def test_sealed_rejected_decayed_and_other_domains_never_count(agent, wild):
    seal(wild("The lighthouse keeper's diary.").pk, owner="owner")
    reject(wild("The lighthouse keeper lied.").pk, owner="owner", reason="false")
    let_go(wild("The lighthouse keeper's boat.").pk, actor="owner")
    wild("The lighthouse keeper's salary.", domain="work")
    assert _recall(agent)["other_scopes"] == {"wild": 0}


def test_the_count_follows_as_of(agent, wild):
    wild("The lighthouse keeper retired.")
    assert _recall(agent, as_of="2001-01-01T00:00:00Z")["other_scopes"] == {"wild": 0}
