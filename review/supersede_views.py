"""The supersede screen: edit the old words into the correction (the box starts from them),
preview it exactly as it will be stored (scrubbed, with its hash, and a word-level diff against
the old), confirm with adopting words that carry that hash, then see old and new side by side.
Thin: the rules live in review.ceremony.supersede.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_http_methods

from memory.errors import GroveError
from memory.models import EventKind
from review import ceremony
from review.queue import decision_item, hidden_marks
from review.view_helpers import get_node_or_404, owner_name
from web.htmx import HtmxHttpRequest

_TOKENS = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> SafeString:
    """Old -> new, word by word (whitespace kept as its own tokens), as HTML with <del> and
    <ins>. Every piece of text is escaped here, on the server, before it is marked safe."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    parts: list[str] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append(escape("".join(a[i1:i2])))
            continue
        if i2 > i1:
            parts.append(f"<del>{escape(''.join(a[i1:i2]))}</del>")
        if j2 > j1:
            parts.append(f"<ins>{escape(''.join(b[j1:j2]))}</ins>")
    return mark_safe("".join(parts))  # each part escaped above


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
            preview = ceremony.preview_supersede(new_body)
            stage = "preview"
        except GroveError as exc:
            if error is None:
                error, status = exc, exc.status
    context = {
        "item": item,
        "stage": stage,
        "diff": word_diff(old.body, preview["body"]) if preview else "",
        "preview": preview,
        "new_body": preview["body"] if preview else new_body,
        "words": words,
        "error": error,
        "marks": hidden_marks(preview["body"]) if preview else [],
    }
    return render(request, "review/supersede.html", context, status=status)


@require_GET
def review_superseded(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """Old and new side by side, after a supersede."""
    old = get_node_or_404(node_id)
    event = old.events.filter(kind=EventKind.SUPERSEDED).select_related("related_node").first()
    if event is None or event.related_node is None:
        raise Http404(f"node {node_id} has not been superseded")
    context = {
        "old": decision_item(old),
        "new": decision_item(event.related_node),
        "event": event,
    }
    return render(request, "review/superseded.html", context)
