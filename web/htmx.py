"""How an htmx-posted act answers: the swapped fragment in place, or a message and a redirect
to a safe `next` for a plain form POST. Views stay thin typed functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def back(request: HttpRequest, default: str) -> HttpResponseRedirect:
    """Redirect to the form's `next` when it is a local path, else to `default` (never off-site)."""
    target = request.POST.get("next", "")
    # A path, never a name: redirect() would try a bare word as a view name and raise.
    if not target.startswith("/") or not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = default
    return redirect(target)


def act_response(
    request: HtmxHttpRequest,
    act: Callable[[], Any],
    *,
    refusal: type[Exception],
    done: Callable[[Any], str],
    fallback: str,
    row: Callable[[str | None], HttpResponse | None] | None = None,
) -> HttpResponse:
    """Run one act and answer: htmx gets `row(error)` (the swapped fragment, 200 even on a
    refusal because htmx swaps only 2xx answers, so the fragment carries the message); a plain
    POST, or a row that answers None, gets a message and a redirect to a safe `next`.

    `refusal` is the exception the act refuses with, its str the reason shown: the caller names
    it (memory's GroveError) because this module may know nothing of the apps."""
    error: str | None = None
    result: Any = None
    try:
        result = act()
    except refusal as exc:
        error = str(exc)
    if request.htmx and row is not None:
        fragment = row(error)
        if fragment is not None:
            return fragment
    if error:
        messages.error(request, f"Nothing was written: {error}")
    elif said := done(result):  # "" when the page the redirect lands on says it already
        messages.success(request, said)
    return back(request, fallback)
