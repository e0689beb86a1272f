"""Questions through the agents' door: ask, feed, answer, reopen, and open questions near a
node. Same rules as agents/operations.py (kept in its own module: that one is at its size
limit): reads and links see only the token's domains, and anything outside is NotFound; a
read-only token may not write (403); the question lands in the token's write domain.
Answering links an answer; it never roots anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.operations import (
    _require_writable,
    _visible_ids,
    _visible_node,
    _write_domain,
)
from agents.params import check_fields
from memory import questions
from memory.errors import Invalid
from memory.models import Kind, Node
from memory.tokens import actor_of

ASK_FIELDS = frozenset({"body", "about", "domain"})
LINK_FIELDS = frozenset({"node"})


def _node_id(value: Any, *, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise Invalid(f"{name} must be a node id (a positive integer)", code="bad_field")
    return value


def _question(token: Any, question_id: int) -> int:
    _visible_node(token, question_id)
    if not Node.objects.filter(pk=question_id, kind=Kind.QUESTION).exists():
        raise Invalid(f"node {question_id} is not a question", code="not_question")
    return question_id


def _state(question_id: int) -> dict[str, Any]:
    return {"question": question_id, "open": questions.is_open(question_id)}


def ask(token: Any, data: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
    """Plant a question about nodes the token can see. Refuses read-only tokens and foreign
    domains (403), unseen nodes (404), a missing body or an empty `about` (400)."""
    _require_writable(token)
    check_fields(data, allowed=ASK_FIELDS, required=("body", "about"))
    about = data.get("about")
    if not isinstance(about, list) or not about:
        raise Invalid("about must be a non-empty list of node ids", code="bad_field")
    ids = {_node_id(value, name="about") for value in about}
    for node_id in sorted(ids - _visible_ids(token, ids)):
        _visible_node(token, node_id)  # raises NotFound, naming the first unseen id
    body = data.get("body")
    if not isinstance(body, str):
        raise Invalid("body must be text", code="bad_field")
    question = questions.plant_question(
        body,
        about=sorted(ids),
        signature=actor_of(token),
        domain=_write_domain(token, data.get("domain")),
    )
    return 201, _state(question.pk)


def link(token: Any, question_id: int, act: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """Feed, answer or reopen a question with a node (both in the token's domains)."""
    _require_writable(token)
    check_fields(data, allowed=LINK_FIELDS, required=("node",))
    node_id = _visible_node(token, _node_id(data.get("node"), name="node"))
    _question(token, question_id)
    actor = actor_of(token)
    if act == "feed":
        questions.feed(question_id, node_id, actor=actor)
    elif act == "answer":
        questions.answer(question_id, node_id, actor=actor)
    else:
        questions.reopen(question_id, actor=actor, by_node_id=node_id)
    return _state(question_id)


def near(token: Any, node_id: int) -> dict[str, Any]:
    """Open questions about or fed by a node the token can see (previews only)."""
    _visible_node(token, node_id)
    return {
        "node": node_id,
        "questions": questions.open_questions_near([node_id], domains=list(token.domains)),
    }
