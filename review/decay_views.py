"""Pending decays: what the sweep collects now and soon, with why nothing holds each node, and
the owner's keep / let go now. Thin: the mark, the sweep and both acts live in memory/sleep/.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memory.errors import GroveError
from memory.sleep import decay
from review.queue import decided_row, pending_decay_rows
from review.view_helpers import HtmxHttpRequest, back, get_node_or_404, owner_name

DEFAULT_WITHIN_DAYS = 7
MAX_WITHIN_DAYS = 365


def _within_days(raw: str | None) -> tuple[int, str | None]:
    """The within-days control: a whole number of days, 0..MAX; anything else is refused with
    a message and the default is used."""
    if raw is None or raw == "":
        return DEFAULT_WITHIN_DAYS, None
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_WITHIN_DAYS:
        return DEFAULT_WITHIN_DAYS, (
            f"“within days” must be a whole number from 0 to {MAX_WITHIN_DAYS}; "
            f"showing {DEFAULT_WITHIN_DAYS}."
        )
    return value, None


PAGE_ROWS = 50  # a screenful to decide on; deciding brings up the next ones


@require_GET
def pending_decays(request: HtmxHttpRequest) -> HttpResponse:
    within, error = _within_days(request.GET.get("within"))
    rows = pending_decay_rows(within_days=within, limit=PAGE_ROWS + 1)
    shown = rows["now"] + rows["soon"]
    capped = len(shown) > PAGE_ROWS
    if capped:  # the most eligible PAGE_ROWS; deciding on them brings up the next ones
        rows["soon" if rows["soon"] else "now"].pop()
    context = {
        "capped": capped,
        "page_rows": PAGE_ROWS,
        "within": within,
        "within_error": error,
        "now_rows": rows["now"],
        "soon_rows": rows["soon"],
        "here": request.get_full_path(),
    }
    return render(request, "review/decays.html", context)


def _decide(request: HtmxHttpRequest, node_id: int, act: str) -> HttpResponse:
    node = get_node_or_404(node_id)
    error = None
    try:
        if act == "keep":
            node = decay.keep(node.pk, actor=owner_name(request))
        else:
            node = decay.let_go(node.pk, actor=owner_name(request))
    except GroveError as exc:
        error = exc.message
    state = "" if error else {"keep": "kept", "let_go": "let go"}[act]
    if request.htmx:
        # 200 even on refusal: htmx swaps only 2xx answers, and the row carries the message.
        context = {
            "row": decided_row(node, state=state),
            "row_error": error,
            "here": reverse("pending_decays"),
        }
        return render(request, "review/decays.html#row", context)
    if error:
        messages.error(request, f"Nothing was written: {error}")
    else:
        messages.success(request, f"#{node.pk} {state}.")
    return back(request, reverse("pending_decays"))


@require_POST
def keep(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    return _decide(request, node_id, "keep")


@require_POST
def let_go(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    return _decide(request, node_id, "let_go")
