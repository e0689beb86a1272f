"""Questions: planted about nodes, fed by nodes that bear on them, answered, reopened.

A question is open while it has no answers edge newer than its last reopens edge (edges carry
the store clock in created_at). Answering links an answer; it never roots anything: only the
owner's ceremonies make ground.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery

from memory.errors import Conflict, Invalid, NotFound
from memory.models import Edge, EdgeKind, Jurisdiction, Kind, Node
from memory.trust import WORDLESS, with_trust
from memory.write import write_node

EXCERPT_CHARS = 160


def plant_question(
    body: str, *, about: list[int], signature: str, domain: str = "personal", owner: bool = False
) -> Node:
    """Write a question (home) with an asks_about edge to each node it is about.

    Goes through write_node (a question with the same words in the domain is that question).
    Refuses (Invalid) an empty `about`, blank signature or body; (NotFound) nodes outside
    `domain` or unknown. `owner`: planted by the owner on the dashboard, kept as it arrives
    (write_node's `owner`).
    """
    ids = sorted({int(node_id) for node_id in about or []})
    if not ids:
        raise Invalid("a question must be about at least one node", code="no_origin")
    found = set(Node.objects.filter(pk__in=ids, domain=domain).values_list("pk", flat=True))
    if missing := sorted(set(ids) - found):
        raise NotFound(f"node(s) {missing} not found in domain {domain!r}")
    return write_node(
        body=body,
        kind=Kind.QUESTION,
        jurisdiction=Jurisdiction.HOME,
        signature=signature,
        domain=domain,
        origins=[{"id": node_id, "relation": EdgeKind.ASKS_ABOUT} for node_id in ids],
        owner=owner,
    ).node


def _question(question_id: int) -> Node:
    node = Node.objects.filter(pk=question_id).first()
    if node is None:
        raise NotFound(f"question {question_id} not found")
    if node.kind != Kind.QUESTION:
        raise Invalid(f"node {question_id} is a {node.kind}, not a question", code="not_question")
    return node


def _link(from_id: int, question: Node, kind: str, *, actor: str, again: str) -> Edge:
    if not isinstance(actor, str) or not actor.strip():
        raise Invalid("say who links this", code="no_actor")
    node = Node.objects.filter(pk=from_id).first()
    if node is None:
        raise NotFound(f"node {from_id} not found")
    if node.pk == question.pk:
        raise Invalid("a question cannot link to itself", code="self_loop")
    if node.domain != question.domain:
        raise NotFound(f"node {from_id} not found in domain {question.domain!r}")
    try:
        with transaction.atomic():
            return Edge.objects.create(
                from_node=node, to_node=question, kind=kind, created_by=actor.strip()
            )
    except IntegrityError:
        # Edges are immutable and unique per (from, to, kind): a second answer or reopening
        # by the same node cannot be newer than the first, so it is refused, not ignored.
        raise Conflict(again, code="already_linked") from None


def feed(question_id: int, node_id: int, *, actor: str) -> Edge:
    """A node bears on the question (feeds edge node -> question). Refuses unknown nodes,
    non-questions, other domains, and a node that already feeds it."""
    question = _question(question_id)
    return _link(
        node_id,
        question,
        EdgeKind.FEEDS,
        actor=actor,
        again=f"node {node_id} already feeds question {question_id}",
    )


def answer(question_id: int, answer_node_id: int, *, actor: str) -> Edge:
    """Answer the question (answers edge answer -> question). Never makes anything ground.
    Refuses a node that already answered it (answer with a new node after a reopening)."""
    question = _question(question_id)
    return _link(
        answer_node_id,
        question,
        EdgeKind.ANSWERS,
        actor=actor,
        again=f"node {answer_node_id} already answered question {question_id}",
    )


def reopen(question_id: int, *, actor: str, by_node_id: int) -> Edge:
    """Reopen the question because of `by_node_id` (reopens edge node -> question)."""
    question = _question(question_id)
    return _link(
        by_node_id,
        question,
        EdgeKind.REOPENS,
        actor=actor,
        again=f"node {by_node_id} already reopened question {question_id}",
    )


def _last(kind: str) -> Subquery:
    return Subquery(
        Edge.objects.filter(to_node=OuterRef("pk"), kind=kind)
        .order_by("-created_at")
        .values("created_at")[:1]
    )


def _open_questions() -> QuerySet[Node]:
    """Questions whose last answer (if any) is not newer than their last reopening; the store
    clock of the edges (created_at) orders them."""
    return (
        Node.objects.filter(kind=Kind.QUESTION)
        .annotate(last_answer=_last(EdgeKind.ANSWERS), last_reopen=_last(EdgeKind.REOPENS))
        .filter(Q(last_answer__isnull=True) | Q(last_answer__lte=F("last_reopen")))
    )


def is_open(question_id: int) -> bool:
    """True while the question has no answer newer than its last reopening."""
    return _open_questions().filter(pk=_question(question_id).pk).exists()


def open_among(question_ids: Iterable[int]) -> set[int]:
    """Which of these questions are open, in one query (for lists)."""
    ids = [int(i) for i in question_ids]
    return set(_open_questions().filter(pk__in=ids).values_list("pk", flat=True))


def open_questions_near(
    node_ids: Iterable[int], *, domains: Iterable[str] | None = None, limit: int = 10
) -> list[dict[str, Any]]:
    """Open, live, visible questions that ask about or are fed by any of `node_ids`, ranked by
    how many distinct live nodes feed them (then newest first). Previews only."""
    ids = [int(node_id) for node_id in node_ids]
    near = Edge.objects.filter(
        to_node=OuterRef("pk"),
        from_node_id__in=ids,
        kind=EdgeKind.FEEDS,
    )
    asks = Edge.objects.filter(
        from_node=OuterRef("pk"), to_node_id__in=ids, kind=EdgeKind.ASKS_ABOUT
    )
    qs = _open_questions().filter(decayed_at__isnull=True).filter(Exists(near) | Exists(asks))
    if domains is not None:
        qs = qs.filter(domain__in=list(domains))
    qs = with_trust(qs).exclude(trust__in=WORDLESS)
    ranked = qs.annotate(
        feeders=Count(
            "in_edges__from_node",
            filter=Q(in_edges__kind=EdgeKind.FEEDS, in_edges__from_node__decayed_at__isnull=True),
            distinct=True,
        )
    ).order_by("-feeders", "-created_at", "-id")[: max(0, int(limit))]
    return [
        {
            "jurisdiction": question.jurisdiction,
            "id": question.pk,
            "trust": question.trust,
            "kind": question.kind,
            "excerpt": question.body[:EXCERPT_CHARS],
            "feeders": question.feeders,
        }
        for question in ranked
    ]
