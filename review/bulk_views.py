"""Bulk decline and reject from the queue, as the Django admin does it: pick rows (or "all
matching" the filters, e.g. all from one agent), pick an action, give one reason.

Each node's act is its own atomic ceremony (decline or reject), run one after the other, each
in its own transaction. Not one transaction for all: an act refused for one node (rooted or
rejected meanwhile, or ground) must not undo the others, the report names each refusal, and
the write lock is held for one act at a time, so agents and the worker are not held up by a
long batch. Reject passes through a confirmation page that lists exactly the nodes it will
tombstone; the confirmed form carries those ids, so nothing else is touched.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from memory import inputs
from memory.errors import GroveError
from memory.models import Node
from review import ceremony
from review.queue import QueueFilters, decision_item, waiting
from review.view_helpers import owner_name
from review.views import queue_url
from web.htmx import HtmxHttpRequest

MAX_BULK = 1000  # one POST never acts on more than this many nodes
ACTIONS = {"decline": "Declined", "reject": "Rejected as false"}


def _ids(request: HtmxHttpRequest, filters: QueueFilters) -> list[int]:
    """The nodes the owner chose: every proposal matching the filters, or the ticked rows."""
    if request.POST.get("scope") == "matching":
        return [item.node.pk for item in waiting().matching(filters)][:MAX_BULK]
    ids: list[int] = []
    for raw in request.POST.getlist("ids"):
        if (node_id := inputs.typed_node_id(raw)) is not None and node_id not in ids:
            ids.append(node_id)
    return ids[:MAX_BULK]


def _run(action: str, ids: list[int], *, owner: str, reason: str) -> list[tuple[int, str]]:
    """Each act in its own transaction (see the module docstring); returns the refusals."""
    refused: list[tuple[int, str]] = []
    for node_id in ids:
        try:
            if action == "decline":
                ceremony.decline(node_id, owner=owner, reason=reason)
            else:
                ceremony.reject(node_id, owner=owner, reason=reason)
        except GroveError as exc:
            refused.append((node_id, exc.message))
    return refused


@require_POST
def review_bulk(request: HtmxHttpRequest) -> HttpResponse:
    filters = QueueFilters.from_query(request.POST)
    action = request.POST.get("action", "")
    if action not in ACTIONS:
        messages.error(request, "Nothing was written: choose decline or reject.")
        return redirect(queue_url(filters))
    ids = _ids(request, filters)
    if not ids:
        messages.error(request, "Nothing was written: tick at least one proposal.")
        return redirect(queue_url(filters))
    reason = request.POST.get("reason", "")
    if action == "reject" and request.POST.get("confirmed") != "yes":
        nodes = Node.objects.in_bulk(ids)
        context = {
            "items": [decision_item(nodes[i]) for i in ids if i in nodes],
            "reason": reason,
            "filters": filters,
            "queue_href": queue_url(filters),
        }
        return render(request, "review/bulk_reject.html", context)
    refused = _run(action, ids, owner=owner_name(request), reason=reason)
    done = len(ids) - len(refused)
    if done:
        messages.success(request, f"{ACTIONS[action]}: {done} node{'s' if done != 1 else ''}.")
    for node_id, why in refused[:10]:
        messages.error(request, f"#{node_id} was left as it was: {why}")
    if len(refused) > 10:
        messages.error(request, f"… and {len(refused) - 10} more were left as they were.")
    return redirect(queue_url(filters))
