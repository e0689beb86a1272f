"""The agent tokens page: who can reach the API, in which domains; mint, govern (domains,
read-only, mute, auto-decline, a write limit: each change a grant on the chain), connect
(ready snippets) and revoke after a confirmation. And the agents page: what each one did.

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
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dashboard.agent_activity import ACTIVITY, agents
from dashboard.snippets import snippets
from memory import inputs
from memory.errors import Invalid, NotFound
from memory.models import ApiToken, Node
from memory.tokens import MAX_WRITE_LIMIT, change_token, create_token, revoke_token


def _api_url(request: HttpRequest) -> str:
    return request.build_absolute_uri(reverse("api_no_route", args=[""]))


def _page(
    request: HttpRequest, extra: dict[str, Any] | None = None, *, status: int = 200
) -> HttpResponse:
    api_url = _api_url(request)
    rows = [
        (token, snippets(token.name, api_url=api_url) if token.is_active else [])
        for token in ApiToken.objects.order_by("revoked_at", "name")
    ]
    context = {
        "tokens": rows,
        "max_write_limit": MAX_WRITE_LIMIT,
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
    created = snippets(token.name, api_url=_api_url(request), secret=secret)
    return _page(request, {"created": token, "secret": secret, "created_snippets": created})


def _flag(request: HttpRequest, name: str) -> bool:
    return request.POST.get(name) == "1"


@require_POST
def change_token_view(request: HttpRequest, name: str) -> HttpResponse:
    """Change a live token's grant from its row's form (memory.tokens.change_token: one grant
    event naming what changed, nothing when nothing did); back to the tokens page, which says
    what changed or why it was refused."""
    limit = request.POST.get("write_limit", "").strip() or "0"
    if not inputs.ascii_digits(limit) or len(limit) > 7:
        messages.error(
            request, f"A write limit is a whole number of writes a minute, not {limit!r}."
        )
        return redirect("tokens")
    try:
        token, changed = change_token(
            name=name,
            domains=[d for d in re.split(r"[\s,]+", request.POST.get("domains", "")) if d],
            read_only=_flag(request, "read_only"),
            muted=_flag(request, "muted"),
            auto_decline=_flag(request, "auto_decline"),
            write_limit=int(limit),
        )
    except (Invalid, NotFound) as refused:
        messages.error(request, refused.message)
    else:
        if changed:
            words = ", ".join(f.replace("_", " ") for f in changed)
            messages.success(request, f"Token {token.name}: {words} changed, from its next call.")
        else:
            messages.info(request, f"Token {token.name}: nothing changed.")
    return redirect(reverse("tokens") + f"#govern-{name}")


@require_GET
def agents_page(request: HttpRequest) -> HttpResponse:
    """Each token's last days: what it wrote, proposed, recalled (with the queries) and read,
    its last use, and its proposals pending and declined. Each count opens the audit log on
    that agent, day and kind."""
    found = agents()
    context = {"agents": found, "columns": list(ACTIVITY.values()), "kinds": ACTIVITY}
    return render(request, "dashboard/agents.html", context)
