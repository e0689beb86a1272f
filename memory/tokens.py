"""Agent bearer tokens: minted once, stored only as a sha256 hash, scoped to domains, revocable.

The secret is shown to the owner exactly once (by `manage.py token create`); Grove keeps its hash
and a short prefix so the dashboard can tell tokens apart without holding anything usable.

Every grant is on the hash chain: minting writes a token_granted event and revoking a
token_revoked one, each carrying grant_detail() (never the secret, nor its hash: a digest of
the hash, so a swapped hash shows too). Integrity and import compare each token row with its
latest grant (memory/custody/integrity.py, tokens_disagree_with_grant).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory import audit
from memory.errors import GroveError, Invalid, NotFound
from memory.models import ApiToken, EventKind

SECRET_PREFIX = "grv_"
# Who grants and revokes: the owner, at the dashboard or the command line.
OWNER = "owner"
PREFIX_CHARS = 12
# last_used_at is a convenience for the owner, not an audit: refresh it at most this often so a
# busy agent's reads do not each take the write lock.
LAST_USED_RESOLUTION = timedelta(seconds=60)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_DOMAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class Unauthorized(GroveError):
    """No usable bearer token: missing, malformed, unknown or revoked."""

    status = 401
    code = "unauthorized"


def grant_detail(token: ApiToken) -> dict[str, Any]:
    """What a grant event records of a token: the one spelling the writer and integrity share.
    The stored hash is itself only a digest of the secret, but it is what authenticates: the
    record keeps a digest of it instead, which names a swapped hash and opens nothing."""
    revoked = token.revoked_at
    return {
        "token": token.pk,
        "name": token.name,
        "prefix": token.prefix,
        "domains": list(token.domains),
        "read_only": bool(token.read_only),
        "revoked_at": None if revoked is None else revoked.isoformat(),
        "token_hash_sha256": hashlib.sha256(token.token_hash.encode("ascii")).hexdigest(),
    }


def hash_secret(secret: str) -> str:
    """sha256 hex of a bearer secret: the only form Grove stores."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_token(
    *, name: str, domains: list[str], read_only: bool = False, actor: str = OWNER
) -> tuple[ApiToken, str]:
    """Mint a token for an agent and return it with its secret (shown once, never stored), and
    its token_granted event in the same transaction.

    Reads the store clock for created_at. Refuses (Invalid) a malformed or taken name, no domains,
    or a malformed domain label.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise Invalid(
            "token name must be 1-100 letters, digits, '.', '_' or '-'", code="bad_token_name"
        )
    cleaned: list[str] = []
    for domain in domains:
        if not isinstance(domain, str) or not _DOMAIN.match(domain):
            raise Invalid(f"domain {domain!r} is not a valid label", code="bad_domain")
        if domain not in cleaned:
            cleaned.append(domain)
    if not cleaned:
        raise Invalid("a token needs at least one domain (--domain)", code="no_domain")
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    try:
        with transaction.atomic():
            token = ApiToken.objects.create(
                name=name,
                token_hash=hash_secret(secret),
                prefix=secret[:PREFIX_CHARS],
                domains=cleaned,
                read_only=read_only,
            )
            audit.record(
                EventKind.TOKEN_GRANTED,
                node=None,
                actor=actor,
                detail=grant_detail(token),
                at=token.created_at,
            )
    except IntegrityError:
        raise Invalid(f"a token named {name!r} already exists", code="token_exists") from None
    return token, secret


def revoke_token(*, name: str, actor: str = OWNER) -> ApiToken:
    """Revoke a token by name, with its token_revoked event in the same transaction (idempotent:
    a revoked token keeps its first revocation time, and its one event).

    Reads the store clock. Refuses (NotFound) an unknown name.
    """
    with transaction.atomic():
        token = ApiToken.objects.filter(name=name).first()
        if token is None:
            raise NotFound(f"no token named {name!r}")
        now = timezone.now()
        if ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now):
            token.refresh_from_db()
            audit.record(
                EventKind.TOKEN_REVOKED,
                node=None,
                actor=actor,
                detail=grant_detail(token),
                at=now,
            )
    return token


def active_token(*, name: str) -> ApiToken:
    """The live token with this name, for a local process the owner starts (manage.py mcp).

    Refuses (Unauthorized) an unknown or revoked name.
    """
    token = ApiToken.objects.filter(name=name, revoked_at__isnull=True).first()
    if token is None:
        raise Unauthorized(f"no active token named {name!r}")
    return token


def authenticate(authorization: str | None) -> ApiToken:
    """Resolve an `Authorization: Bearer <secret>` header to its live token.

    Reads the store clock to refresh last_used_at (at most once a minute). Refuses (Unauthorized)
    a missing or malformed header, an unknown secret and a revoked token alike, with one message
    so a caller learns nothing about which tokens exist.
    """
    scheme, _, secret = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise Unauthorized("send 'Authorization: Bearer <token>'", code="no_token")
    token = ApiToken.objects.filter(
        token_hash=hash_secret(secret.strip()), revoked_at__isnull=True
    ).first()
    if token is None:
        raise Unauthorized("this token is unknown or revoked", code="bad_token")
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def actor_of(token: ApiToken) -> str:
    """The actor and walk holder an agent's calls are recorded under."""
    return f"agent:{token.name}"
