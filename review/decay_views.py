"""Pending decays: what the sweep collects now and soon, with why nothing holds each node, and
the owner's keep / let go now (behind a confirmation, with Undo on the spot). Thin: the mark,
the sweep and both acts live in memory/sleep/.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory import batches, forgetting, inputs
from memory.errors import GroveError
from memory.models import Node
from memory.trust import trust_map
from review.queue import (
    NO_WORDS,
    decided_row,
    decision_item,
    held_back_words,
    pending_decay_rows,
)
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
GROUPS_SHOWN = 50  # the largest groups; rendering 1,400 lines was most of the page's time


def _filters(query: QueryDict) -> dict[str, str]:
    """The page's filters (forgetting.GROUP_FILTERS) and its horizon, blank ones left out."""
    chosen = {k: query.get(k, "").strip()[:200] for k in (*forgetting.GROUP_FILTERS, "horizon")}
    return {k: v for k, v in chosen.items() if v}


def _horizon(filters: dict[str, str]) -> int:
    raw = filters.get("horizon", "0")
    return int(raw) if raw.isdigit() and int(raw) in forgetting.HORIZONS else 0


def filter_words(filters: dict[str, str]) -> str:
    """The filter in words: the confirmation's heading and the batch's record."""
    horizon = _horizon(filters)
    parts = ["pending at the next sleep" if not horizon else f"pending within {horizon} days"]
    for name, words in (
        ("domain", "in domain {}"),
        ("kind", "of kind {}"),
        ("jurisdiction", "in jurisdiction {}"),
        ("author", "written by {}"),
        ("origin", "derived from #{}"),
        ("words", "saying “{}”"),
    ):
        if filters.get(name):
            parts.append(words.format(filters[name]))
    return "every node " + ", ".join(parts)


def _ages(groups: list[dict[str, Any]]) -> None:
    now = timezone.now()
    for group in groups:
        oldest = group["oldest"]
        if isinstance(oldest, str):
            oldest = datetime.fromisoformat(oldest)
        if timezone.is_naive(oldest):
            oldest = oldest.replace(tzinfo=UTC)
        group["age_days"] = int((now - oldest).total_seconds() // 86400)


def _links(query: QueryDict, groups: list[dict[str, Any]]) -> None:
    """Each group's three links (its nodes, keep all, let go all) as the page's query with the
    group's filter set and no batch: built here once a group, which the template's
    querystring tag (a QueryDict copy per link) made a third of the page's time."""
    here = {k: v for k, v in query.lists() if k != "batch"}
    for group in groups:
        chosen = {"origin": group["origin"], "domain": group["domain"], "author": group["author"]}
        group["show"] = "?" + urlencode({**here, **chosen}, doseq=True)
        chosen["origin"] = chosen["origin"] or ""
        for act in ("keep", "let_go"):
            group[act] = "?" + urlencode({**here, "act": act, **chosen}, doseq=True)


def _group_rows(ids: list[int], now_garbage: Any) -> list[dict[str, Any]]:
    """Rows for the nodes of one chosen group or filter: what each says and why it goes."""
    nodes = Node.objects.in_bulk(ids)
    trust = trust_map(list(nodes))
    why = forgetting.why_rows(list(nodes), now_garbage=now_garbage)
    rows = []
    for node_id, node in nodes.items():
        row = decided_row(node, state="", trust=trust[node_id])
        row.update(why=why[node_id], eligible_now=True)
        if row["trust"] in NO_WORDS:
            row["excerpt"] = ""
        rows.append(row)
    return rows


@require_GET
def pending_decays(request: HtmxHttpRequest) -> HttpResponse:
    within, error = _within_days(request.GET.get("within"))
    filters = _filters(request.GET)
    # One read of the graph for the whole page: the tabs, the groups and the rows share it.
    marks = forgetting.pending_marks(within_days=within)
    horizon = _horizon(filters)
    groups = forgetting.groups_at(marks, horizon, filters)
    largest = groups[:GROUPS_SHOWN]  # a filter narrows to the rest
    _ages(largest)
    _links(request.GET, largest)
    narrowed = {k: v for k, v in filters.items() if k != "horizon"}
    chosen = forgetting.matching_at(marks, horizon, filters, limit=PAGE_ROWS) if narrowed else []
    rows = pending_decay_rows(within_days=within, limit=PAGE_ROWS + 1, marks=marks)
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
        "pending_now": len(marks.horizons[0].garbage),  # what a release hands the next sleep
        "decay_groups": largest,
        "groups_total": len(groups),
        "horizon": horizon,
        "horizons": [(days, len(marks.horizons[days].garbage)) for days in forgetting.HORIZONS],
        "filters": filters,
        "filter_words": filter_words(filters),
        "filter_query": urlencode(filters),
        "group_rows": _group_rows(chosen, marks.horizons[0].garbage),
        "undo_batch": batch
        if batches.BATCH_ID.fullmatch(batch := request.GET.get("batch", ""))
        else "",
        "undo_next": reverse("pending_decays") + (f"?{urlencode(filters)}" if filters else ""),
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


BULK_ACTS = {"keep": "Keep", "let_go": "Let go of"}
SAMPLE = 20


@require_http_methods(["GET", "POST"])
def bulk(request: HtmxHttpRequest) -> HttpResponse:
    """Keep or let go of every pending node the filters choose (a group is a filter: its
    origin, domain and author). GET, or a POST without `confirmed`, shows what it will do: the
    count, the filter in words, a sample. The confirmed POST acts on what matches then, as one
    batch, and lands on the page with the same filters and an Undo for a let go."""
    query = request.POST if request.method == "POST" else request.GET
    act, filters = query.get("act", ""), _filters(query)
    here = reverse("pending_decays") + (f"?{urlencode(filters)}" if filters else "")
    if act not in BULK_ACTS:
        messages.error(request, "Nothing was written: choose keep or let go.")
        return redirect(here)
    ids = forgetting.matching_pending(forgetting.pending_ids()[_horizon(filters)], filters)
    words = filter_words(filters)
    if request.method == "POST" and request.POST.get("confirmed") == "yes":
        owner = owner_name(request)
        if act == "keep":
            out = batches.keep_many(ids, actor=owner, words=words)
        else:
            out = batches.let_go_many(ids, actor=owner, words=words)
        done = len(out.done)
        messages.success(
            request, f"{BULK_ACTS[act].removesuffix(' of')}: {done} node{'s' * (done != 1)}."
        )
        if out.skipped:
            messages.info(request, f"{len(out.skipped)} left as they were.")
        if act == "let_go" and done:
            return redirect(
                f"{reverse('pending_decays')}?{urlencode({**filters, 'batch': out.batch})}"
            )
        return redirect(here)
    nodes = Node.objects.in_bulk(ids[:SAMPLE])
    context = {
        "act": act,
        "verb": BULK_ACTS[act],
        "count": len(ids),
        "words": words,
        "filters": filters,
        "sample": [decision_item(nodes[i]) for i in ids[:SAMPLE] if i in nodes],
        "more": max(0, len(ids) - SAMPLE),
        "back": here,
    }
    return render(request, "review/decays_bulk.html", context)
