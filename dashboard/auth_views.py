from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model, login, update_session_auth_hash
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import urlsafe_base64_decode
from django.views.decorators.http import require_http_methods


@login_not_required
@require_http_methods(["GET", "POST"])
def login_link(request: HttpRequest, uidb64: str, token: str) -> HttpResponse:
    """Follow a one-time link. GET shows a button (so link previews cannot spend it); POST
    logs the owner in, which spends the link."""
    try:
        user = get_user_model().objects.get(pk=int(urlsafe_base64_decode(uidb64)))
    except (ValueError, TypeError, OverflowError, get_user_model().DoesNotExist):
        user = None
    valid = (
        user is not None and user.is_superuser and default_token_generator.check_token(user, token)
    )
    if not valid:
        return render(request, "registration/link_invalid.html", status=400)
    if request.method == "POST":
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("overview")
    return render(request, "registration/login_link.html")


class OwnerRequest(HttpRequest):
    user: User  # LoginRequiredMiddleware lets only the signed-in owner this far


@require_http_methods(["GET", "POST"])
def set_password(request: OwnerRequest) -> HttpResponse:
    form = SetPasswordForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        form.save()
        update_session_auth_hash(request, form.user)
        messages.success(request, "Password set. You can now sign in with it as 'owner'.")
        return redirect("overview")
    return render(request, "registration/set_password.html", {"form": form})
