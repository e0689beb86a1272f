"""Search: a query box over recall; results are previews, and opening one is not a read (the
owner's browsing is inspection, not use).

The owner searches both jurisdictions unless they narrow it; results page on 20 at a time (up
to recall's 100); an empty query lists the most recent nodes instead of nothing. A search says
how many forgotten nodes also match (linking to /forgotten/); "Search what was forgotten"
(forgotten=1) digs instead (memory.recall.dig), which brings nothing back: only Restore does.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from dashboard.asof import widget_value
from dashboard.browse import page_number, row_values, rows_of
from dashboard.highlight import highlight
from dashboard.view_helpers import OWNER_ACTOR, as_of_param
from memory import inputs
from memory.errors import Invalid
from memory.models import Node, Trust
from memory.recall import MAX_LIMIT, query_terms, recall
from memory.recall.dig import dig, forgotten_matches
from memory.recall.lexical import fts_candidates
from memory.trust import trust_map
from memory.visibility import SCOPES, Visibility, live_at
from web.htmx import HtmxHttpRequest

RESULTS = 20
PICKS = 8  # suggestions under a node picker
_RECENT_BATCH = 4 * RESULTS  # as of T: candidates judged at a time for liveness then
_FIELD_ID = re.compile(r"[a-z][a-z0-9-]{0,40}")


def _found(
    query: str, *, page: int, forgotten: bool, **options: Any
) -> tuple[list[dict[str, Any]], bool]:
    """Results 1..page*RESULTS, each with its domain and a highlighted excerpt; and whether
    there are more (one extra asked for, within recall's limit). `forgotten`: a dig (the
    decayed nodes only; as of and superseded do not apply)."""
    shown = min(page * RESULTS, MAX_LIMIT)
    limit = min(shown + 1, MAX_LIMIT)
    if forgotten:
        options.pop("include_superseded", None)
        if options.pop("as_of", None) is not None:
            raise Invalid("a search of what was forgotten looks at now; clear As of")
        results = dig(query, limit=limit, actor=OWNER_ACTOR, why=True, **options)
    else:
        results = recall(query, limit=limit, actor=OWNER_ACTOR, why=True, **options)
    domains = dict(
        Node.objects.filter(pk__in=[r["id"] for r in results]).values_list("id", "domain")
    )
    terms = query_terms(query)
    for r in results:
        r["domain"] = domains.get(r["id"], "")
        r["excerpt_html"] = highlight(r["excerpt"], terms)
    return results[:shown], len(results) > shown


def _recent(*, scope: str, domain: str, as_of: datetime | None) -> list[dict[str, Any]]:
    """The newest live nodes in scope (as of T: those written by then and live then), for an
    empty query; sealed and rejected ones listed without their words."""
    vis = Visibility.of(domains=[domain] if domain else None, scope=scope, as_of=as_of)
    qs = Node.objects.all()
    if vis.domains is not None:
        qs = qs.filter(domain__in=vis.domains)
    if scope != "both":
        qs = qs.filter(jurisdiction=scope)
    # Live as NOT (decayed_at IS NOT NULL): the same rows, but no liveness index can serve it,
    # so SQLite without statistics walks the store clock's index from the newest and stops at
    # RESULTS, instead of reading every live node through a liveness index and sorting them
    # (100k: 157 ms against 9 ms, with the full decayed_at index that 0017 replaced).
    if as_of is None:
        qs = qs.exclude(decayed_at__isnull=False)
        return rows_of(list(row_values(qs.order_by("-created_at", "-id"))[:RESULTS]))
    return rows_of(_live_then(qs.filter(created_at__lte=as_of), as_of))


def _live_then(qs: QuerySet[Node], as_of: datetime) -> list[dict[str, Any]]:
    """The newest RESULTS rows of `qs` that were live at `as_of`: liveness then is the latest
    lifecycle event by then (live_at), not the flag now, so the candidates are judged a batch
    at a time, newest first, until a page of them was live."""
    newest = qs.order_by("-created_at", "-id").values_list("pk", flat=True)
    kept: list[int] = []
    start = 0
    while len(kept) < RESULTS:
        ids = list(newest[start : start + _RECENT_BATCH])
        alive = live_at(ids, as_of=as_of)
        kept += [pk for pk in ids if pk in alive]
        if len(ids) < _RECENT_BATCH:
            break
        start += _RECENT_BATCH
    rows = {r["id"]: r for r in row_values(Node.objects.filter(pk__in=kept[:RESULTS]))}
    return [rows[pk] for pk in kept[:RESULTS]]


@require_GET
def search(request: HtmxHttpRequest) -> HttpResponse:
    query = request.GET.get("q", "").strip()
    scope = request.GET.get("scope", "both")
    domain = request.GET.get("domain", "").strip()
    superseded = request.GET.get("superseded") == "1"
    in_forgotten = request.GET.get("forgotten") == "1"
    page = page_number(request.GET.get("page"))
    as_of, error = as_of_param(request)
    results: list[dict[str, Any]] = []
    recent: list[dict[str, Any]] = []
    more = False
    also = 0
    if not error:
        try:
            if query:
                domains = [domain] if domain else None
                results, more = _found(
                    query,
                    page=page,
                    forgotten=in_forgotten,
                    scope=scope,
                    domains=domains,
                    as_of=as_of,
                    include_superseded=superseded,
                )
                if not in_forgotten:
                    also = forgotten_matches(query, scope=scope, domains=domains)
            else:
                recent = _recent(scope=scope, domain=domain, as_of=as_of)
        except Invalid as refused:
            error = refused.message
    context = {
        "query": query,
        "scope": scope,
        "scopes": SCOPES,
        "domain": domain,
        "domains": Node.objects.values_list("domain", flat=True).distinct().order_by("domain"),
        "superseded": superseded,
        "in_forgotten": in_forgotten,
        "forgotten_matches": also,
        "as_of": as_of,
        "as_of_value": widget_value(as_of) if as_of else request.GET.get("as_of", ""),
        "error": error,
        "results": results,
        "recent": recent,
        "more": more,
        "page": page,
        "searched": bool(query),
    }
    if request.htmx:
        return render(request, "dashboard/search.html#results", context)
    return render(request, "dashboard/search.html", context, status=400 if error else 200)


@require_GET
def node_pick(request: HtmxHttpRequest) -> HttpResponse:
    """The node picker's suggestions as the owner types (htmx): the node of that number, then
    the best matches of the words, live and neither sealed nor rejected, at most PICKS. From
    the word index, not recall: a keystroke is not a recall and leaves no RecallLog row, and
    like all browsing it counts no read."""
    query = request.GET.get("q", "").strip()[:200]
    wanted = request.GET.get("for", "")
    field = wanted if _FIELD_ID.fullmatch(wanted) else ""
    ids: list[int] = [int(query.lstrip("#"))] if inputs.ascii_digits(query.lstrip("#")) else []
    terms = query_terms(query)
    if terms:
        vis = Visibility.of(domains=None, scope="both", as_of=None)
        ids += [i for i, _ in fts_candidates(terms, vis, PICKS * 2) if i not in ids]
    nodes = Node.objects.filter(pk__in=ids, decayed_at__isnull=True).only("id", "body", "kind")
    found = {node.pk: node for node in nodes}
    trust = trust_map(list(found))
    hidden = {Trust.SEALED.value, Trust.REJECTED.value}
    rows = [found[i] for i in ids if i in found and trust[i] not in hidden][:PICKS]
    context = {"rows": rows, "field": field, "query": query}
    return render(request, "dashboard/_pick.html", context)
