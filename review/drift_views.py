"""Drift on the desk: ground nodes whose file changed since they were rooted, from the latest
sleep's drift step (a page never reads the files), each with its two answers: supersede with
the file's words, or keep the words as they are."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memory.custody.drift import accept_drift, last_found
from memory.errors import GroveError
from review.view_helpers import owner_name
from web.htmx import HtmxHttpRequest, act_response


@require_GET
def drift_list(request: HtmxHttpRequest) -> HttpResponse:
    found = sorted(last_found().values(), key=lambda p: p["id"])
    return render(request, "review/drift.html", {"found": found})


@require_POST
def keep_words(request: HtmxHttpRequest, node_id: int) -> HttpResponse:
    return act_response(
        request,
        lambda: accept_drift(node_id, actor=owner_name(request)),
        refusal=GroveError,
        done=lambda _: f"#{node_id} keeps its words; drift speaks again if the file changes.",
        fallback=reverse("review_drift"),
    )
