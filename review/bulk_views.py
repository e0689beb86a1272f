"""Bulk acts from the queue, as the Django admin's delete action does them: pick rows (or "all
matching" the filters, e.g. all from one agent) and an act; a confirmation page then says what
will happen (the count, the filter in words, a sample of the rows) and only its confirmed form
acts, on exactly the ids it lists. Rejecting many asks for the count typed.

A confirmed act is one batch on the record (memory/batches.py): each of its events carries the
batch id, and the queue it lands on offers to undo the batch (so does /audit/?batch=...).
Each decline is its own ceremony in its own transaction, one after the other: an act refused for
one node (rooted or rejected meanwhile, or ground) must not undo the others, the report names
each refusal, and the write lock is held for one act at a time. Let go declines each proposal
(the agent's noise is "not now" first) and then lets the declined nodes go in one transaction:
they leave recall now, and stay restorable.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memory import batches, inputs
from memory.errors import GroveError
from memory.models import Node
from review import ceremony
from review.queue import QueueFilters, decision_item, waiting
from review.undo import undo_batch
from review.view_helpers import owner_name
from review.views import queue_url
from web.htmx import HtmxHttpRequest

MAX_BULK = 1000  # one POST never acts on more than this many nodes
SAMPLE = 20  # rows a confirmation page shows; the rest are counted
ACTIONS = {"decline": "Declined", "let_go": "Let go", "reject": "Rejected as false"}
VERBS = {"decline": "Decline", "let_go": "Let go of", "reject": "Reject"}


def _ids(request: HtmxHttpRequest, filters: QueueFilters) -> list[int]:
    """The nodes the owner chose: every proposal matching the filters, or the ticked rows."""
    if request.POST.get("scope") == "matching":
        return [item.node.pk for item in waiting().matching(filters)][:MAX_BULK]
    ids: list[int] = []
    for raw in request.POST.getlist("ids"):
        if (node_id := inputs.typed_node_id(raw)) is not None and node_id not in ids:
            ids.append(node_id)
    return ids[:MAX_BULK]


def filter_words(filters: QueueFilters, *, ticked: bool) -> str:
    """The filter the owner chose, in words (the confirmation's heading and the batch's
    record)."""
    if ticked:
        return "the proposals you ticked"
    parts = ["every proposal"]
    if filters.agent:
        parts.append(f"from {filters.agent}")
    if filters.domain:
        parts.append(f"in domain {filters.domain}")
    if filters.kind:
        parts.append(f"of kind {filters.kind}")
    if filters.older_than_days:
        parts.append(f"proposed over {filters.older_than_days} days ago")
    return " ".join(parts)


def _declines(ids: list[int], *, owner: str, reason: str, tag: dict[str, str]) -> dict[int, str]:
    """Each decline in its own transaction (see the module docstring); returns the refusals."""
    refused: dict[int, str] = {}
    for node_id in ids:
        try:
            ceremony.decline(node_id, owner=owner, reason=reason, batch=tag)
        except GroveError as exc:
            refused[node_id] = exc.message
    return refused


def _rejects(ids: list[int], *, owner: str, reason: str) -> dict[int, str]:
    refused: dict[int, str] = {}
    for node_id in ids:
        try:
            ceremony.reject(node_id, owner=owner, reason=reason)
        except GroveError as exc:
            refused[node_id] = exc.message
    return refused


def _confirm(
    request: HtmxHttpRequest,
    action: str,
    ids: list[int],
    words: str,
    filters: QueueFilters,
    error: str = "",
) -> HttpResponse:
    nodes = Node.objects.in_bulk(ids[:SAMPLE])
    context = {
        "action": action,
        "verb": VERBS[action],
        "count": len(ids),
        "ids": ids,
        "words": words,
        "sample": [decision_item(nodes[i]) for i in ids[:SAMPLE] if i in nodes],
        "more": max(0, len(ids) - SAMPLE),
        "reason": request.POST.get("reason", ""),
        "filters": filters,
        "queue_href": queue_url(filters),
        "error": error,
    }
    return render(request, "review/bulk_confirm.html", context, status=400 if error else 200)


@require_POST
def review_bulk(request: HtmxHttpRequest) -> HttpResponse:
    filters = QueueFilters.from_query(request.POST)
    action = request.POST.get("action", "")
    if action not in ACTIONS:
        messages.error(request, "Nothing was written: choose decline, let go or reject.")
        return redirect(queue_url(filters))
    ids = _ids(request, filters)
    if not ids:
        messages.error(request, "Nothing was written: tick at least one proposal.")
        return redirect(queue_url(filters))
    words = request.POST.get("words") or filter_words(
        filters, ticked=request.POST.get("scope") != "matching"
    )
    if request.POST.get("confirmed") != "yes":
        return _confirm(request, action, ids, words, filters)
    if action == "reject" and request.POST.get("typed_count", "").strip() != str(len(ids)):
        error = f"Nothing was written: type {len(ids)}, the number of nodes, to reject them."
        return _confirm(request, action, ids, words, filters, error)
    owner, reason = owner_name(request), request.POST.get("reason", "")
    batch = ""
    if action == "reject":
        refused = _rejects(ids, owner=owner, reason=reason)
    else:
        batch = batches.new_batch()
        tag = batches.tag(batch, words)
        refused = _declines(ids, owner=owner, reason=reason, tag=tag)
        if action == "let_go":
            gone = batches.let_go_many(
                [i for i in ids if i not in refused], actor=owner, words=words, batch=batch
            )
            refused.update(gone.skipped)
    done = len(ids) - len(refused)
    if done:
        messages.success(request, f"{ACTIONS[action]}: {done} node{'s' if done != 1 else ''}.")
    for node_id, why in list(refused.items())[:10]:
        messages.error(request, f"#{node_id} was left as it was: {why}")
    if len(refused) > 10:
        messages.error(request, f"… and {len(refused) - 10} more were left as they were.")
    return redirect(queue_url(filters, batch=batch) if batch and done else queue_url(filters))


@require_POST
def undo(request: HtmxHttpRequest, batch: str) -> HttpResponse:
    """Undo one batch (review/undo.py) and go back where the owner was (`next`, a local path)."""
    back = request.POST.get("next", "")
    if not back.startswith("/") or back.startswith("//"):
        back = queue_url(QueueFilters())
    try:
        out = undo_batch(batch, owner=owner_name(request))
    except GroveError as exc:
        messages.error(request, f"Nothing was undone: {exc.message}")
        return redirect(back)
    done = len(out.done)
    messages.success(request, f"Undone: {done} node{'s' if done != 1 else ''} as they were.")
    if out.skipped:
        messages.info(request, f"{len(out.skipped)} left as they are: decided on since.")
    return redirect(back)
