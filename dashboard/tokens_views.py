"""The agent tokens page: who can reach the API, in which domains; revoke, after a confirmation.

Tokens are minted on the command line (`manage.py token create`) so the secret is shown once,
in the owner's terminal, and never passes through a page.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from memory.errors import NotFound
from memory.models import ApiToken
from memory.tokens import revoke_token


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
    rows = ApiToken.objects.order_by("revoked_at", "name")
    return render(request, "dashboard/tokens.html", {"tokens": rows})
