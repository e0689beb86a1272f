"""The owner's decision screens: the review queue, a node's decision panel, and the root,
reject, seal and unseal acts. Thin: every rule lives in review/ceremony.py.

Every act works as a plain form POST that redirects back (to a safe `next`), and, when htmx
posts it from a queue row, answers with that row alone so the row swaps in place.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory.errors import GroveError
from review import ceremony
from review.queue import decision_item, hidden_marks, proposed_queue, sealed_nodes
from review.view_helpers import HtmxHttpRequest, back, get_node_or_404, owner_name

QUEUE_PAGE = 50  # rows per page: the oldest first; deciding them brings up the next


@require_GET
def review_queue(request: HtmxHttpRequest) -> HttpResponse:
    items, total = proposed_queue(limit=QUEUE_PAGE)
    context = {"items": items, "total": total, "sealed": sealed_nodes(limit=QUEUE_PAGE)}
    return render(request, "review/queue.html", context)


@require_GET
def review_node(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    node = get_node_or_404(node_id)
    item = decision_item(node)
    context = {
        "item": item,
        "rootable": ceremony.can_root(node, item.trust) is None,
        "supersedable": ceremony.can_supersede(node, item.trust) is None,
    }
    return render(request, "review/node.html", context)


@require_http_methods(["GET", "POST"])
def review_root(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """GET shows the exact stored body and its hash; POST adopts it if the submitted hash is
    the hash of what was shown. A refusal re-renders the screen with the reason, writing nothing."""
    node = get_node_or_404(node_id)
    error = None
    words = ""
    status = 200
    if request.method == "POST":
        words = request.POST.get("adopting_words", "")
        try:
            ceremony.root(
                node.pk,
                adopting_words=words,
                expected_body_hash=request.POST.get("expected_body_hash", ""),
                owner=owner_name(request),
            )
        except GroveError as exc:
            error, status = exc, exc.status
        else:
            messages.success(request, f"Rooted #{node.pk}: it is ground now.")
            return redirect("review_node", node_id=node.pk)
    item = decision_item(node)
    context = {
        "item": item,
        "rootable": ceremony.can_root(node, item.trust) is None,
        "error": error,
        "words": words,
        "marks": hidden_marks(node.body),
    }
    return render(request, "review/root.html", context, status=status)


def _row_act(request: HtmxHttpRequest, node_id: int, act: str) -> HttpResponse:
    """Run one act on a node. htmx gets the queue row back (with the refusal inside it, if
    any); a plain POST gets a message and a redirect."""
    node = get_node_or_404(node_id)
    owner = owner_name(request)
    reason = request.POST.get("reason", "")
    error = None
    try:
        if act == "reject":
            ceremony.reject(node.pk, owner=owner, reason=reason)
        elif act == "seal":
            ceremony.seal(node.pk, owner=owner, reason=reason)
        else:
            ceremony.unseal(node.pk, owner=owner, reason=reason)
    except GroveError as exc:
        error = exc.message
    if request.htmx:
        # 200 even on refusal: htmx swaps only 2xx answers, and the row carries the message.
        context = {"item": decision_item(node), "row_error": error}
        return render(request, "review/queue.html#row", context)
    if error:
        messages.error(request, f"Nothing was written: {error}")
    else:
        done = {"reject": "Rejected", "seal": "Sealed", "unseal": "Unsealed"}[act]
        messages.success(request, f"{done} #{node.pk}.")
    return back(request, reverse("review_queue"))


@require_POST
def review_reject(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    return _row_act(request, node_id, "reject")


@require_POST
def review_seal(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    return _row_act(request, node_id, "seal")


@require_POST
def review_unseal(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    return _row_act(request, node_id, "unseal")
