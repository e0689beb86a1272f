"""The agent tokens page: who can reach the API, in which domains; mint, and revoke after a
confirmation.

A new token's secret is shown once, in the response to the form that minted it, and never
stored (Grove keeps its hash): that page is marked no-store so no cache keeps it either. The
command line (`manage.py token create`) mints the same way.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from memory.errors import Invalid, NotFound
from memory.models import ApiToken, Node
from memory.tokens import create_token, revoke_token


def _page(
    request: HttpRequest, extra: dict[str, Any] | None = None, *, status: int = 200
) -> HttpResponse:
    context = {
        "tokens": ApiToken.objects.order_by("revoked_at", "name"),
        "known_domains": Node.objects.values_list("domain", flat=True)
        .distinct()
        .order_by("domain"),
        "form": {"name": "", "domains": "personal", "read_only": False},
        **(extra or {}),
    }
    return render(request, "dashboard/tokens.html", context, status=status)


@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    if request.method == "POST" and request.POST.get("confirmed") != "yes":
        # Revoking cuts an agent off at once and cannot be undone: say so and ask first.
        token = ApiToken.objects.filter(name=request.POST.get("name", ""), revoked_at=None).first()
        if token is None:
            messages.error(request, "No such active token.")
            return redirect("tokens")
        return render(request, "dashboard/token_revoke.html", {"token": token})
    if request.method == "POST":
        try:
            token = revoke_token(name=request.POST.get("name", ""))
        except NotFound as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Token {token.name} is revoked.")
        return redirect("tokens")
    return _page(request)


@never_cache
@require_POST
def create_token_view(request: HttpRequest) -> HttpResponse:
    """Mint a token from the form; the answer shows its secret once. A refused form comes back
    with its values and the reason (400), and nothing is stored."""
    name = request.POST.get("name", "").strip()
    typed = request.POST.get("domains", "")
    read_only = request.POST.get("read_only") == "1"
    form = {"name": name, "domains": typed, "read_only": read_only}
    domains = [d for d in re.split(r"[\s,]+", typed) if d]
    try:
        token, secret = create_token(name=name, domains=domains, read_only=read_only)
    except Invalid as refused:
        return _page(request, {"form": form, "create_error": refused.message}, status=400)
    return _page(request, {"created": token, "secret": secret})
