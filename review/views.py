"""The owner's decision screens: the review queue, a node's decision panel, and the root,
decline, reject, seal and unseal acts. Thin: every rule lives in review/ceremony.py.

Every act works as a plain form POST that redirects back (to a safe `next`), and, when htmx
posts it from a queue row, answers with that row alone so the row swaps in place. Reject, the
destructive one, always passes through a confirmation page that says what it does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory import inputs
from memory.authority import authority_report
from memory.custody.drift import last_found
from memory.errors import GroveError
from memory.questions import open_questions_near
from review import ceremony
from review.queue import (
    QueueFilters,
    decision_item,
    hidden_marks,
    next_waiting,
    position,
    replacement,
    sealed_nodes,
    waiting,
    with_bodies,
    with_near,
)
from review.view_helpers import get_node_or_404, owner_name
from web.htmx import HtmxHttpRequest, act_response, back

QUEUE_PAGE = 50  # rows per page, oldest first
_BATCH = re.compile(r"[0-9a-f]{16}")  # a batch id (memory.batches.new_batch): the Undo box


def queue_url(filters: QueueFilters, **extra: str) -> str:
    query = urlencode({**filters.as_query(), **extra})
    return reverse("review_queue") + (f"?{query}" if query else "")


def root_url(node_id: int | None, filters: QueueFilters) -> str:
    """The root screen of `node_id` with the filter travelling on; the queue when None."""
    if node_id is None:
        return queue_url(filters)
    query = urlencode(filters.as_query())
    return reverse("review_root", args=[node_id]) + (f"?{query}" if query else "")


@require_GET
def review_queue(request: HtmxHttpRequest) -> HttpResponse:
    """Proposed nodes, oldest first, filtered by agent, domain, kind and age, 50 a page."""
    filters = QueueFilters.from_query(request.GET)
    everything = waiting()
    matching = everything.matching(filters)
    page = Paginator(matching, QUEUE_PAGE).get_page(request.GET.get("page"))
    waiting_ids = [item.node.pk for item in everything.items]
    context = {
        "page": page,
        "items": with_near(with_bodies(list(page.object_list)), waiting_ids=waiting_ids),
        "total": len(everything.items),
        "matching": len(matching),
        "filters": filters,
        "filter_query": urlencode(filters.as_query()),
        "facets": everything,
        "ages": (1, 7, 30, 90),
        "here": request.get_full_path(),
        "sealed": sealed_nodes(limit=QUEUE_PAGE),
        "undo_batch": batch if _BATCH.fullmatch(batch := request.GET.get("batch", "")) else "",
        "undo_next": queue_url(filters),
        "drift_count": len(last_found()),
    }
    return render(request, "review/queue.html", context)


@require_GET
def review_node(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    node = get_node_or_404(node_id)
    item = decision_item(node)
    context = {
        "item": item,
        "replaced": replacement(node.pk),
        "near_questions": open_questions_near([node.pk]) if item.shows_words else [],
    }
    return render(request, "review/node.html", context)


def _origins(node_id: int) -> list[dict[str, Any]]:
    try:
        origins: list[dict[str, Any]] = authority_report(node_id).get("origins", [])
        return origins
    except GroveError:
        return []


@require_http_methods(["GET", "POST"])
def review_root(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """GET shows the exact stored body, its hash, what it came from and why it was proposed;
    POST adopts it if the submitted hash is the hash of what was shown, then goes on to the
    next waiting item (same filters). A refusal re-renders the screen, writing nothing."""
    node = get_node_or_404(node_id)
    source = request.POST if request.method == "POST" else request.GET
    filters = QueueFilters.from_query(source)
    # Asked before the act: once rooted, the node leaves the queue and its place with it.
    queue = waiting()  # one read of the queue serves the place, the next and the near-duplicates
    place = position(node.pk, filters, queue=queue)
    following = place.following if place else next_waiting(after=node.pk, filters=filters)
    error, words, status = None, "", 200
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
            return redirect(root_url(following, filters))
    item = decision_item(node)
    if item.shows_words:
        item = with_near([item], waiting_ids=[i.node.pk for i in queue.items])[0]
    context = {
        "item": item,
        "error": error,
        "words": words,
        "marks": hidden_marks(node.body),
        "origins": _origins(node.pk) if item.shows_words else [],
        "filters": filters,
        "filter_query": urlencode(filters.as_query()),
        "queue_href": queue_url(filters),
        "place": place,
        "following": following,
        "next_href": root_url(following, filters),
    }
    return render(request, "review/root.html", context, status=status)


def _row(request: HtmxHttpRequest, node_id: int) -> Callable[[str | None], HttpResponse]:
    """The queue row of `node_id` as it stands after an act, with the refusal inside it."""

    def answer(error: str | None) -> HttpResponse:
        item = decision_item(get_node_or_404(node_id))
        # The page the row sits on, so the swapped row's forms keep its filter and page.
        here = request.htmx.current_url_abs_path or ""
        context = {"item": item, "row_error": error, "here": here}
        return render(request, "review/queue.html#row", context)

    return answer


class NodeAct(Protocol):
    def __call__(self, node_id: int, *, owner: str, reason: str = "") -> object: ...


@dataclass(frozen=True)
class OneClickAct:
    ceremony: NodeAct
    done: str  # the message after a plain POST; {pk} is the node's id


# The acts a single POST does, from a queue row (swapped in place) or a node's panel. None has
# a confirmation page: none destroys anything. Reject, which tombstones, has its own view.
ONE_CLICK_ACTS = {
    "decline": OneClickAct(ceremony.decline, "Declined #{pk}: it stays in memory, unreviewed."),
    "seal": OneClickAct(ceremony.seal, "Sealed #{pk}."),
    "unseal": OneClickAct(ceremony.unseal, "Unsealed #{pk}."),
}


@require_POST
def review_act(request: HtmxHttpRequest, node_id: int, act: str) -> HttpResponse:
    """One of ONE_CLICK_ACTS (the URL names it) on a node, with the optional reason posted."""
    node = get_node_or_404(node_id)
    chosen = ONE_CLICK_ACTS[act]
    owner, reason = owner_name(request), request.POST.get("reason", "")
    raw = request.POST.get("duplicate_of", "")
    # "Decline as duplicate of #N": the decline records the node it repeats.
    twin = int(raw) if act == "decline" and inputs.ascii_digits(raw) else None

    def run() -> object:
        if twin is not None:
            return ceremony.decline(node.pk, owner=owner, reason=reason, duplicate_of=twin)
        return chosen.ceremony(node.pk, owner=owner, reason=reason)

    said = chosen.done.format(pk=node.pk) + (f" A duplicate of #{twin}." if twin else "")
    return act_response(
        request,
        run,
        refusal=GroveError,
        done=lambda _: said,
        fallback=reverse("review_queue"),
        row=_row(request, node.pk),
    )


@require_http_methods(["GET", "POST"])
def review_reject(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """Reject as false, Django-admin style: GET (or a POST without `confirmed`) shows what it
    will do; ground needs a second page (step=ground) before it can be confirmed at all."""
    node = get_node_or_404(node_id)
    item = decision_item(node)
    post = request.POST if request.method == "POST" else request.GET
    is_ground = ceremony.asks_ground_confirmation(node.pk)
    ground_ok = is_ground and post.get("ground_confirmed") == "yes"
    error, status = None, 200
    confirmed = request.method == "POST" and post.get("confirmed") == "yes"
    if confirmed and (ground_ok or not is_ground):
        try:
            ceremony.reject(
                node.pk,
                owner=owner_name(request),
                reason=post.get("reason", ""),
                ground_confirmed=ground_ok,
            )
        except GroveError as exc:
            error, status = exc, exc.status
        else:
            messages.success(request, f"Rejected #{node.pk} as false: its words are a tombstone.")
            return back(request, reverse("review_node", args=[node.pk]))
    context = {
        "item": item,
        "stage": "ground" if is_ground and post.get("step") != "ground" and not ground_ok else "",
        "ground": is_ground,
        "reason": post.get("reason", ""),
        "next": post.get("next", ""),
        "error": error,
    }
    return render(request, "review/reject_confirm.html", context, status=status)
