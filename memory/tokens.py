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
import math
import re
import secrets
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Q
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
        "muted": bool(token.muted),
        "auto_decline": bool(token.auto_decline),
        "write_limit": int(token.write_limit),
    }


# What a grant written before the owner could govern tokens meant by its missing fields.
GRANT_DEFAULTS: dict[str, Any] = {"muted": False, "auto_decline": False, "write_limit": 0}
# The reason on a token_granted event that changes a token already granted (the first grant
# has none): the same kind, because integrity holds a row to its latest grant, whatever changed.
CHANGED = "changed"
MAX_WRITE_LIMIT = 100_000
RATE_WINDOW = timedelta(seconds=60)


class RateLimited(GroveError):
    """A token over its write limit for this minute; `retry_after` is whole seconds."""

    status = 429
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _clean_domains(domains: list[str]) -> list[str]:
    cleaned: list[str] = []
    for domain in domains:
        if not isinstance(domain, str) or not _DOMAIN.match(domain):
            raise Invalid(f"domain {domain!r} is not a valid label", code="bad_domain")
        if domain not in cleaned:
            cleaned.append(domain)
    if not cleaned:
        raise Invalid("a token needs at least one domain (--domain)", code="no_domain")
    return cleaned


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
    cleaned = _clean_domains(domains)
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


def change_token(
    *,
    name: str,
    domains: list[str] | None = None,
    read_only: bool | None = None,
    muted: bool | None = None,
    auto_decline: bool | None = None,
    write_limit: int | None = None,
    actor: str = OWNER,
) -> tuple[ApiToken, list[str]]:
    """Change what a live token is granted (None leaves a field as it is) and return it with the
    names of the fields that changed; a change writes a token_granted event (reason "changed",
    the whole new grant and detail["changed"]) in the same transaction, and no change writes
    nothing. The next call through the token reads its row, so a change takes effect then.

    Reads the store clock for the event. Refuses (NotFound) an unknown or revoked name; (Invalid)
    no domains, a malformed domain, or a write limit outside 0..MAX_WRITE_LIMIT.
    """
    wanted: dict[str, Any] = {}
    if domains is not None:
        wanted["domains"] = _clean_domains(domains)
    for field, value in (
        ("read_only", read_only),
        ("muted", muted),
        ("auto_decline", auto_decline),
    ):
        if value is not None:
            wanted[field] = bool(value)
    if write_limit is not None:
        if isinstance(write_limit, bool) or not 0 <= write_limit <= MAX_WRITE_LIMIT:
            raise Invalid(
                f"a write limit is 0 (none) to {MAX_WRITE_LIMIT} writes a minute",
                code="bad_write_limit",
            )
        wanted["write_limit"] = write_limit
    with transaction.atomic():
        token = ApiToken.objects.filter(name=name, revoked_at__isnull=True).first()
        if token is None:
            raise NotFound(f"no active token named {name!r}")
        changed = [f for f, v in wanted.items() if getattr(token, f) != v]
        if not changed:
            return token, []
        for field in changed:
            setattr(token, field, wanted[field])
        # The grant first, then the row: the database lets a governed field change only right
        # after the grant event that names it (migration 0028's guard).
        audit.record(
            EventKind.TOKEN_GRANTED,
            node=None,
            actor=actor,
            reason=CHANGED,
            detail={**grant_detail(token), "changed": changed},
        )
        token.save(update_fields=changed)
    return token, changed


def count_write(token: ApiToken) -> None:
    """Count one write by `token` in its current minute, or refuse it (RateLimited) when the
    minute already holds write_limit writes. A token with no limit counts nothing.

    Reads the store clock. Each step is one conditional UPDATE on the token's row, so two
    processes writing through one token share one count (a check then an update would let both
    through at the limit)."""
    if not token.write_limit:
        return
    now = timezone.now()
    start = now - RATE_WINDOW
    rows = ApiToken.objects.filter(pk=token.pk)
    # A minute over (or never begun): this write opens a new one.
    fresh = rows.filter(Q(write_window_at__isnull=True) | Q(write_window_at__lte=start))
    if fresh.update(write_window_at=now, write_window_count=1):
        return
    if rows.filter(write_window_count__lt=F("write_limit")).update(
        write_window_count=F("write_window_count") + 1
    ):
        return
    opened = rows.values_list("write_window_at", flat=True).first() or now
    wait = max(1, math.ceil((opened + RATE_WINDOW - now).total_seconds()))
    raise RateLimited(
        f"token {token.name} may write {token.write_limit} times a minute; try again in {wait} s",
        retry_after=wait,
    )


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
