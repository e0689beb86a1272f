"""Small helpers shared by the review screens (views stay thin typed functions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django_htmx.middleware import HtmxDetails

from memory.errors import GroveError
from memory.models import Node


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def get_node_or_404(node_id: int) -> Node:
    """Any node, in any domain: the owner sees all. A sealed node is found too, and every
    review template shows nothing of it but its id."""
    return get_object_or_404(Node, pk=node_id)


def owner_name(request: HttpRequest) -> str:
    """The actor for the owner's acts: the signed-in account ("owner")."""
    return request.user.get_username()


def back(request: HttpRequest, default: str) -> HttpResponseRedirect:
    """Redirect to the form's `next` when it is a local path, else to `default` (never off-site)."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = default
    return redirect(target)


def act_response(
    request: HtmxHttpRequest,
    act: Callable[[], Any],
    *,
    done: Callable[[Any], str],
    fallback: str,
    row: Callable[[str | None], HttpResponse | None] | None = None,
) -> HttpResponse:
    """Run one act and answer: htmx gets `row(error)` (the swapped fragment, 200 even on a
    refusal because htmx swaps only 2xx answers, so the fragment carries the message); a plain
    POST, or a row that answers None, gets a message and a redirect to a safe `next`."""
    error: str | None = None
    result: Any = None
    try:
        result = act()
    except GroveError as exc:
        error = exc.message
    if request.htmx and row is not None:
        fragment = row(error)
        if fragment is not None:
            return fragment
    if error:
        messages.error(request, f"Nothing was written: {error}")
    elif said := done(result):  # "" when the page the redirect lands on says it already
        messages.success(request, said)
    return back(request, fallback)
