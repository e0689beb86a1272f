"""The supersede screen: edit the old words into the correction (the box starts from them),
preview it exactly as it will be stored (scrubbed, with its hash, and the grouped word diff of
review/versions.py, inline and side by side; words unchanged are refused there), confirm with
adopting words that carry that hash, then land on the chain's version history.
Thin: the rules live in review.ceremony.supersede.
"""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from memory.errors import GroveError
from memory.models import EventKind
from review import ceremony, versions
from review.queue import decision_item, hidden_marks
from review.view_helpers import get_node_or_404, owner_name
from web.htmx import HtmxHttpRequest


@require_http_methods(["GET", "POST"])
def review_supersede(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """Stages: write (GET, or POST step=edit), preview (POST step=preview), confirm (POST
    step=confirm -> redirect to the side-by-side). A refusal re-renders with its reason."""
    old = get_node_or_404(node_id)
    item = decision_item(old)
    stage, preview, error, status = "write", None, None, 200
    # The box starts from the old words: a correction is usually a small edit, not a retype.
    new_body = request.POST.get("new_body", old.body if item.shows_words else "")
    words = request.POST.get("adopting_words", "")
    step = request.POST.get("step", "") if request.method == "POST" else ""
    if step == "confirm":
        try:
            ceremony.supersede(
                old.pk,
                new_body=new_body,
                adopting_words=words,
                expected_body_hash=request.POST.get("expected_body_hash", ""),
                owner=owner_name(request),
            )
        except GroveError as exc:
            error, status = exc, exc.status
        else:
            return redirect("review_superseded", node_id=old.pk)
    if step in ("preview", "confirm"):
        try:
            preview = ceremony.preview_supersede(new_body, old=old)
            stage = "preview"
        except GroveError as exc:
            if error is None:
                error, status = exc, exc.status
    runs = versions.pieces(old.body, preview["body"]) if preview else []
    left, right = versions.side_by_side(runs)
    context = {
        "item": item,
        "stage": stage,
        "diff": versions.inline(runs),
        "left": left,
        "right": right,
        "preview": preview,
        "new_body": preview["body"] if preview else new_body,
        "words": words,
        "error": error,
        "marks": hidden_marks(preview["body"]) if preview else [],
    }
    return render(request, "review/supersede.html", context, status=status)


@require_GET
def review_superseded(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """The version history of a superseded node's chain: every version, each step's diff."""
    old = get_node_or_404(node_id)
    event = old.events.filter(kind=EventKind.SUPERSEDED).select_related("related_node").first()
    chain = versions.history(old)
    if event is None or event.related_node is None or chain is None:
        raise Http404(f"node {node_id} has not been superseded")
    context = {
        "old": decision_item(old),
        "new": decision_item(event.related_node),
        "event": event,
        "history": chain,
    }
    return render(request, "review/superseded.html", context)
