"""Pending decays: what the sweep collects now and soon, with why nothing holds each node, and
the owner's keep / let go now (behind a confirmation, with Undo on the spot). Thin: the mark,
the sweep and both acts live in memory/sleep/.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory import forgetting, inputs
from memory.errors import GroveError
from memory.models import Node
from review.queue import decided_row, decision_item, held_back_words, pending_decay_rows
from review.view_helpers import get_node_or_404, owner_name
from web.htmx import HtmxHttpRequest, act_response

DEFAULT_WITHIN_DAYS = 7
MAX_WITHIN_DAYS = 365


def _within_days(raw: str | None) -> tuple[int, str | None]:
    """The within-days control: a whole number of days, 0..MAX; anything else is refused with
    a message and the default is used."""
    if raw is None or raw == "":
        return DEFAULT_WITHIN_DAYS, None
    value = int(raw) if inputs.ascii_digits(raw) else -1
    if not 0 <= value <= MAX_WITHIN_DAYS:
        return DEFAULT_WITHIN_DAYS, (
            f"“within days” must be a whole number from 0 to {MAX_WITHIN_DAYS}; "
            f"showing {DEFAULT_WITHIN_DAYS}."
        )
    return value, None


def _undoable(raw: str) -> Node | None:
    """The node just let go, if it is still decayed: the page offers to undo it on the spot."""
    if (node_id := inputs.typed_node_id(raw)) is None:
        return None
    return Node.objects.filter(pk=node_id, decayed_at__isnull=False).first()


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
        "undo": _undoable(request.GET.get("let_go", "")),
        "held": held_back_words(),
    }
    return render(request, "review/decays.html", context)


@require_POST
def release(request: HtmxHttpRequest) -> HttpResponse:
    """The owner releases what sleep's guard held back (memory/forgetting.py): back to the
    pending page, saying what the next sleep will do, or why nothing was released."""
    try:
        event = forgetting.release_held(actor=owner_name(request))
    except GroveError as refused:
        messages.error(request, f"Nothing was released: {refused.message}")
    else:
        count = event.detail["count"]
        messages.success(request, f"Released {count:,} decays: the next sleep collects them.")
    return redirect("pending_decays")


@require_POST
def keep(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    node = get_node_or_404(node_id)

    def row(error: str | None) -> HttpResponse:
        fresh = get_node_or_404(node.pk)
        context = {
            "row": decided_row(fresh, state="" if error else "kept"),
            "row_error": error,
            "here": reverse("pending_decays"),
        }
        return render(request, "review/decays.html#row", context)

    return act_response(
        request,
        lambda: forgetting.keep(node.pk, actor=owner_name(request)),
        refusal=GroveError,
        done=lambda _: f"#{node.pk} kept.",
        fallback=reverse("pending_decays"),
        row=row,
    )


@require_http_methods(["GET", "POST"])
def let_go(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """Let go now, behind a confirmation that says what it does (GET, or a POST without
    `confirmed`); once done, the pending list comes back with an Undo (restore) on the spot."""
    node = get_node_or_404(node_id)
    if request.method == "POST" and request.POST.get("confirmed") == "yes":
        undo_here = reverse("pending_decays") + f"?let_go={node.pk}"
        return act_response(
            request,
            lambda: forgetting.let_go(node.pk, actor=owner_name(request)),
            refusal=GroveError,
            done=lambda _: "",  # the page it lands on says so, beside its Undo
            fallback=undo_here,
        )
    context = {"item": decision_item(node), "next": request.GET.get("next", "")}
    return render(request, "review/let_go_confirm.html", context)


@require_POST
def undo_let_go(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    """Undo a let go: restore the node (a restored event; its access count is untouched)."""
    node = get_node_or_404(node_id)
    return act_response(
        request,
        lambda: forgetting.restore(node.pk, actor=owner_name(request)),
        refusal=GroveError,
        done=lambda _: f"#{node.pk} restored: it is live again.",
        fallback=reverse("pending_decays"),
    )
