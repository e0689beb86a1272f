"""A reply read in its context: its vector with half the vector of the turn it answers
(memory.vectors.likeness.in_context), and only where the reader may see that turn."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from memory.forgetting import let_go
from memory.models import Vector
from memory.recall import recall, rerank
from memory.recall.gather import answered
from memory.vectors.embed import embed_missing, get_embedder
from memory.vectors.likeness import ANSWERED, in_context, query_vector
from memory.visibility import Visibility
from review.ceremony import reject, seal

QUERY = "max stove"
RULES = ("domain", "scope", "as_of", "decayed", "sealed", "rejected")


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def _across(q: np.ndarray, seed: int) -> np.ndarray:
    """A unit vector at right angles to `q`."""
    v = np.random.default_rng(seed).standard_normal(len(q)).astype(np.float32)
    return _unit(v - (v @ q) * q)


def _set(node: Any, vector: np.ndarray) -> None:
    Vector.objects.filter(node=node, model=get_embedder().name).update(data=vector.tobytes())


def _talk(make_note: Any, **fields: Any) -> tuple[Any, Any, np.ndarray]:
    """`asked` (its vector the query's own; written with `fields`) and `reply`, which answers it
    (at right angles to the query), written two days before it on the store clock, so an
    as-of can see the reply without the turn it answers."""
    asked = make_note("Do you keep any animals at home?", **fields)
    reply = make_note(
        "This is Max by the stove.",
        origins=[{"id": asked.pk, "relation": "responds_to"}],
        days_old=2,
    )
    embed_missing()
    q = query_vector(get_embedder(), QUERY)
    _set(asked, q)
    _set(reply, _across(q, 1))
    return asked, reply, q


@pytest.fixture
def talk(make_note):
    return _talk(make_note)


def _hide(rule: str, asked: Any, reply: Any) -> Visibility:
    """The reader's view once `rule` hides `asked` (a domain, the home scope, an as-of before
    it, or its own state)."""
    view: dict[str, Any] = {"domains": None, "scope": "home", "as_of": None}
    if rule == "domain":
        view["domains"] = [reply.domain]
    elif rule == "as_of":
        view["as_of"] = (asked.created_at - timedelta(days=1)).isoformat()
    elif rule == "decayed":
        let_go(asked.pk, actor="owner")
    elif rule == "sealed":
        seal(asked.pk, owner="owner", reason="private")
    elif rule == "rejected":
        reject(asked.pk, owner="owner", reason="wrong")
    return Visibility.of(**view)


def test_a_reply_means_what_it_answers_as_well_as_its_own_words(talk) -> None:
    asked, reply, q = talk
    vis = Visibility.of(domains=None, scope="home", as_of=None)
    assert answered([reply.pk, asked.pk], vis) == {reply.pk: asked.pk}
    own, context = in_context(get_embedder().name, q, [reply.pk, asked.pk], {reply.pk: asked.pk})
    assert own[reply.pk] == pytest.approx(0.0, abs=1e-6)
    expected = ANSWERED / np.sqrt(1 + ANSWERED**2)  # (the two vectors at right angles)
    assert context[reply.pk] == pytest.approx(expected, abs=1e-5)
    assert context[asked.pk] == pytest.approx(own[asked.pk])  # it answers nothing


@pytest.mark.parametrize("rule", RULES)
def test_a_turn_the_reader_may_not_see_lends_its_reply_no_meaning(rule, make_note) -> None:
    # The turn answered is written where the rule can hide it: another domain, the wild.
    fields = {"domain": "elsewhere"} if rule == "domain" else {}
    if rule == "scope":
        fields = {"jurisdiction": "wild", "kind": "hearsay", "signature": "a site"}
    asked, reply, q = _talk(make_note, **fields)
    model = get_embedder().name
    everything = Visibility.of(domains=None, scope="both", as_of=None)
    assert answered([reply.pk], everything) == {reply.pk: asked.pk}  # the fixture holds it
    _, before = in_context(model, q, [reply.pk], {reply.pk: asked.pk})
    vis = _hide(rule, asked, reply)
    assert answered([reply.pk], vis) == {}
    own, context = in_context(model, q, [reply.pk], answered([reply.pk], vis))
    assert context[reply.pk] == own[reply.pk] != pytest.approx(before[reply.pk], abs=0.1)


def test_recall_orders_replies_by_what_they_answer_until_that_turn_is_sealed(talk, make_note):
    """A model reading only the context column: the reply to the query's own turn goes first
    while that turn is visible; sealed, the reply is read alone and the other note, nearer
    in its own words, goes first."""
    asked, reply, q = talk
    other = make_note("Max fixed the stove.")
    embed_missing()
    _set(other, _unit(0.3 * q + _across(q, 2)))
    n = len(rerank.FEATURES) + len(rerank.MEANING)
    coefficients = np.zeros(n)
    coefficients[len(rerank.FEATURES) + rerank.MEANING.index("context")] = 1.0
    model = rerank.Model(mean=np.zeros(n), scale=np.ones(n), coefficients=coefficients)
    with rerank.using(model):
        found = [p["id"] for p in recall(QUERY)]
        assert found.index(reply.pk) < found.index(other.pk)
        seal(asked.pk, owner="owner", reason="private")
        found = [p["id"] for p in recall(QUERY)]
    assert asked.pk not in found
    assert found.index(other.pk) < found.index(reply.pk)
