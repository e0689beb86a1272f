"""memory_apitoken's guard (migration 0028): a grant never changes by raw SQL, revocation is one
way and once, and a token is never deleted; what the app writes still goes through."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError
from django.utils import timezone

from memory.models import ApiToken
from memory.tokens import authenticate, create_token, revoke_token
from tests._helpers.vendor import on_postgres, raw, table_columns

GRANT_EDITS = [
    ("id", "id = id + 1000"),
    ("name", "name = 'renamed'"),
    ("token_hash", "token_hash = '" + "0" * 64 + "'"),
    ("prefix", "prefix = 'grv_other'"),
    ("domains", """domains = '["personal", "sealed-work"]'"""),
    ("read_only", "read_only = FALSE"),
    ("created_at", "created_at = '2020-01-01 00:00:00'"),
]


@pytest.fixture
def token(db) -> ApiToken:
    token, _ = create_token(name="scout", domains=["personal"], read_only=True)
    return token


def refused(sql: str, params: tuple = (), match: str = "memory_apitoken_") -> None:
    with pytest.raises(DatabaseError, match=match):
        raw(sql, params, checks_now=on_postgres())


def as_stored(token: ApiToken) -> dict:
    return ApiToken.objects.filter(pk=token.pk).values().get()


@pytest.mark.parametrize(("field", "change"), GRANT_EDITS, ids=[f for f, _ in GRANT_EDITS])
def test_no_update_changes_a_grant_field(token, field, change):
    before = as_stored(token)
    refused(f"UPDATE memory_apitoken SET {change} WHERE id = %s", (token.pk,))
    assert as_stored(token) == before


def test_a_revocation_is_never_unset_nor_moved(token):
    revoke_token(name="scout")
    before = as_stored(token)
    refused("UPDATE memory_apitoken SET revoked_at = NULL WHERE id = %s", (token.pk,))
    moved = "UPDATE memory_apitoken SET revoked_at = '2030-01-01 00:00:00' WHERE id = %s"
    refused(moved, (token.pk,))
    assert as_stored(token) == before


def test_what_the_app_writes_still_goes_through(token):
    raw(
        "UPDATE memory_apitoken SET last_used_at = '2026-01-01 00:00:00' WHERE id = %s", (token.pk,)
    )
    raw("UPDATE memory_apitoken SET last_used_at = NULL WHERE id = %s", (token.pk,))
    _, secret = create_token(name="desk", domains=["home"])
    assert authenticate(f"Bearer {secret}").last_used_at is not None
    revoke_token(name="scout")
    token.refresh_from_db()
    assert token.revoked_at is not None and timezone.now() - token.revoked_at < timedelta(1)


def test_a_taken_name_is_still_refused_in_words(token):
    from memory.errors import Invalid

    with pytest.raises(Invalid, match="already exists"):
        create_token(name="scout", domains=["work"])


def test_no_token_is_deleted(token):
    refused("DELETE FROM memory_apitoken WHERE id = %s", (token.pk,))
    refused("DELETE FROM memory_apitoken")
    assert ApiToken.objects.filter(pk=token.pk).exists()


def _copy(token: ApiToken, verb: str, column: str, value: str) -> str:
    cols = table_columns("memory_apitoken")
    picked = ", ".join(value if c == column else c for c in cols)
    select = f"SELECT {picked} FROM memory_apitoken WHERE id = {token.pk}"
    return f"{verb} INTO memory_apitoken ({', '.join(cols)}) {select}"


@pytest.mark.sqlite_only  # REPLACE deletes the row it collides with, firing no DELETE trigger
@pytest.mark.parametrize("verb", ["REPLACE", "INSERT OR REPLACE"])
@pytest.mark.parametrize(("column", "value"), [("domains", "'[\"work\"]'"), ("id", "id + 1000")])
def test_replace_cannot_take_a_tokens_place(token, verb, column, value):
    before = as_stored(token)
    refused(_copy(token, verb, column, value))
    assert as_stored(token) == before and ApiToken.objects.count() == 1


def test_upsert_cannot_change_a_grant(token):
    before = as_stored(token)
    writable = "FALSE" if on_postgres() else "0"
    where = "TRUE" if on_postgres() else "1"
    refused(
        _copy(token, "INSERT", "name", "name")
        + f" AND {where} ON CONFLICT(id) DO UPDATE SET read_only = {writable}"
    )
    assert as_stored(token) == before


@pytest.mark.postgres_only  # TRUNCATE fires no row trigger
def test_truncate_is_refused(token):
    refused("TRUNCATE memory_apitoken CASCADE", (), "memory_apitoken_no_truncate")
    refused("TRUNCATE memory_apitoken", (), "")  # the nodes' foreign key refuses it first
    assert ApiToken.objects.filter(pk=token.pk).exists()


def test_governing_a_token_goes_through_after_its_grant(token):
    from memory.models import Event
    from memory.tokens import change_token

    changed, fields = change_token(name="scout", domains=["personal", "work"], read_only=False)
    assert fields and as_stored(changed)["domains"] == ["personal", "work"]
    grant = Event.objects.filter(kind="token_granted").order_by("-id").first()
    assert grant is not None and grant.detail["domains"] == ["personal", "work"]


def test_a_governed_field_changed_without_its_grant_is_refused(token):
    # Right after minting the chain's tail is this token's grant: it names the minted values,
    # so a raw edit to any other value is still refused.
    before = as_stored(token)
    refused("""UPDATE memory_apitoken SET domains = '["work"]' WHERE id = %s""", (token.pk,))
    refused("UPDATE memory_apitoken SET muted = TRUE WHERE id = %s", (token.pk,))
    refused("UPDATE memory_apitoken SET write_limit = 5 WHERE id = %s", (token.pk,))
    create_token(name="other", domains=["work"])  # another token's grant on the tail
    refused("""UPDATE memory_apitoken SET domains = '["work"]' WHERE id = %s""", (token.pk,))
    assert as_stored(token) == before
