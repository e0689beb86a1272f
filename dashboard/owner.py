"""The owner: the one account that may use the dashboard, and its one-time login links.

A link is a Django password-reset token over the owner's last_login and password hash: logging
in changes last_login, so a used link stops working (one-time), and it expires after
PASSWORD_RESET_TIMEOUT. Nothing extra is stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

if TYPE_CHECKING:  # the auth models load with the apps, after this module may be imported
    from django.contrib.auth.models import User

OWNER_USERNAME = "owner"


def ensure_owner() -> User:
    """The owner account, created on first use with no usable password (the link logs in)."""
    user_model = get_user_model()
    owner, created = user_model.objects.get_or_create(
        username=OWNER_USERNAME, defaults={"is_staff": True, "is_superuser": True}
    )
    if created:
        owner.set_unusable_password()
        owner.save(update_fields=["password"])
    return owner


def login_path() -> str:
    owner = ensure_owner()
    uid = urlsafe_base64_encode(force_bytes(owner.pk))
    return reverse("login_link", args=[uid, default_token_generator.make_token(owner)])
