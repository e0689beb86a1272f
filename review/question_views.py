"""Questions, the owner's door: plant one about nodes, feed it, answer it, reopen it. Thin: the
rules live in memory/questions.py. An answer or a reopening is a node: the owner names one by
id, or writes a short note that becomes it (a home note derived from the question).
Answering never roots anything.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memory import inputs, questions
from memory.errors import GroveError, Invalid
from memory.models import Edge, EdgeKind, Jurisdiction, Kind, Node
from memory.trust import trust_map, with_trust
from memory.visibility import HIDDEN_TRUST
from memory.write import write_node
from review.view_helpers import owner_name
from web.htmx import HtmxHttpRequest, act_response

LISTED = 100
MAX_QUESTIONS = 5000  # questions considered for the list (newest LISTED shown)


def _ids(raw: str) -> list[int]:
    """Node ids typed as "12, #40 7" (memory/inputs.node_ids); anything else is refused."""
    return inputs.node_ids(raw, name="node ids")


def _question_or_404(question_id: int) -> Node:
    node = Node.objects.filter(pk=question_id, kind=Kind.QUESTION).first()
    if node is None or trust_map([node.pk])[node.pk] in HIDDEN_TRUST:
        raise Http404(f"question {question_id} not found")
    return node


@require_GET
def question_list(request: HtmxHttpRequest) -> HttpResponse:
    """Every visible question, newest first, open ones flagged; the plant form (?about=12)."""
    # Ids first, by the kind index: asked in one query with the ordering, SQLite walks the
    # created_at index over every node instead (145 ms at 100k nodes, against 13).
    ids = list(
        Node.objects.filter(kind=Kind.QUESTION, decayed_at__isnull=True).values_list(
            "id", flat=True
        )[:MAX_QUESTIONS]
    )
    qs = with_trust(Node.objects.filter(pk__in=ids)).exclude(trust__in=list(HIDDEN_TRUST))
    qs = qs.order_by("-created_at", "-id")[:LISTED]
    listed = list(qs)
    still_open = questions.open_among(q.pk for q in listed)
    rows = [{"node": q, "open": q.pk in still_open} for q in listed]
    context = {
        "open_rows": [r for r in rows if r["open"]],
        "closed_rows": [r for r in rows if not r["open"]],
        "about": request.GET.get("about", ""),
    }
    return render(request, "review/questions.html", context)


@require_POST
def question_plant(request: HtmxHttpRequest) -> HttpResponse:
    body = request.POST.get("body", "")
    try:
        about = _ids(request.POST.get("about", ""))
        first = Node.objects.filter(pk=about[0]).first()
        domain = first.domain if first else ""
        question = questions.plant_question(
            body, about=about, signature=owner_name(request), domain=domain, owner=True
        )
    except GroveError as exc:
        messages.error(request, f"Nothing was written: {exc.message}")
        typed = urlencode({"about": request.POST.get("about", "")[:50]})
        return redirect(reverse("questions") + f"?{typed}")
    messages.success(request, f"Planted question #{question.pk}.")
    return redirect("question", question_id=question.pk)


@require_GET
def question_page(request: HtmxHttpRequest, question_id: int) -> HttpResponse:
    question = _question_or_404(question_id)
    edges = list(
        Edge.objects.filter(to_node=question).select_related("from_node").order_by("created_at")
    )
    edges += Edge.objects.filter(from_node=question, kind=EdgeKind.ASKS_ABOUT).select_related(
        "to_node"
    )
    ids = {e.from_node_id for e in edges} | {e.to_node_id for e in edges}
    trust = trust_map(ids)
    rows: dict[str, list[Any]] = {"about": [], "feeds": [], "answers": [], "reopens": []}
    for edge in edges:
        other = edge.to_node if edge.kind == EdgeKind.ASKS_ABOUT else edge.from_node
        key = "about" if edge.kind == EdgeKind.ASKS_ABOUT else edge.kind
        if key in rows:
            state = trust[other.pk]
            words = state not in HIDDEN_TRUST
            rows[key].append({"edge": edge, "node": other, "trust": state, "words": words})
    context = {"question": question, "open": questions.is_open(question.pk), **rows}
    return render(request, "review/question.html", context)


def _node_for(request: HtmxHttpRequest, question: Node) -> int:
    """The node the owner named by id, or a home note written from their text."""
    raw_id = request.POST.get("node", "").strip().lstrip("#")
    text = request.POST.get("text", "").strip()
    if raw_id:
        return inputs.node_id(raw_id, name="the node", code="bad_ids")
    if not text:
        raise Invalid("name a node by its number or write the words", code="no_node")
    return write_node(
        body=text,
        kind=Kind.NOTE,
        jurisdiction=Jurisdiction.HOME,
        signature=owner_name(request),
        domain=question.domain,
        origins=[{"id": question.pk, "relation": EdgeKind.DERIVED_FROM}],
        owner=True,
    ).node.pk


def _link(request: HtmxHttpRequest, question_id: int, act: str) -> HttpResponse:
    question = _question_or_404(question_id)
    actor = owner_name(request)

    @transaction.atomic  # a note written for a link that is then refused is not kept
    def run() -> Edge:
        node_id = _node_for(request, question)
        if act == "feed":
            return questions.feed(question.pk, node_id, actor=actor)
        if act == "answer":
            return questions.answer(question.pk, node_id, actor=actor)
        return questions.reopen(question.pk, actor=actor, by_node_id=node_id)

    done = {"feed": "now feeds", "answer": "answers", "reopen": "reopens"}[act]
    return act_response(
        request,
        run,
        refusal=GroveError,
        done=lambda edge: f"#{edge.from_node_id} {done} question #{question.pk}.",
        fallback=reverse("question", args=[question.pk]),
    )


@require_POST
def question_feed(request: HtmxHttpRequest, question_id: int) -> HttpResponse:
    return _link(request, question_id, "feed")


@require_POST
def question_answer(request: HtmxHttpRequest, question_id: int) -> HttpResponse:
    return _link(request, question_id, "answer")


@require_POST
def question_reopen(request: HtmxHttpRequest, question_id: int) -> HttpResponse:
    return _link(request, question_id, "reopen")
