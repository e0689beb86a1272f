"""Every grant of a token is on the hash chain, and integrity names a token row that disagrees
with its latest grant (memory/tokens.py, memory/custody/integrity.py)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from memory.custody.chain_verify import verify
from memory.custody.integrity import tokens_disagree_with_grant
from memory.models import ApiToken, Event
from memory.tokens import create_token, revoke_token
from tests._helpers.vendor import drop_trigger, raw


def _grants(token: ApiToken) -> list[Event]:
    return [
        e
        for e in Event.objects.filter(kind__in=["token_granted", "token_revoked"]).order_by("id")
        if e.detail.get("token") == token.pk
    ]


def test_minting_writes_a_grant_event_on_the_chain(db):
    token, secret = create_token(name="scout", domains=["personal", "work"], read_only=True)
    (grant,) = _grants(token)
    assert grant.kind == "token_granted" and grant.actor == "owner"
    assert grant.detail["domains"] == ["personal", "work"] and grant.detail["read_only"] is True
    assert grant.detail["name"] == "scout" and grant.detail["revoked_at"] is None
    assert secret not in str(grant.detail) and token.token_hash not in str(grant.detail)
    assert verify().ok


def test_revoking_writes_one_revoke_event(db):
    token, _ = create_token(name="scout", domains=["personal"])
    revoke_token(name="scout")
    revoke_token(name="scout")  # idempotent: the first revocation stands, once on the record
    grants = _grants(token)
    assert [e.kind for e in grants] == ["token_granted", "token_revoked"]
    token.refresh_from_db()
    assert grants[-1].detail["revoked_at"] == token.revoked_at.isoformat()
    assert verify().ok


def test_the_token_command_writes_grant_events(db):
    call_command(
        "token", "create", "desk", "--domain", "home", stdout=StringIO(), stderr=StringIO()
    )
    call_command("token", "revoke", "desk", stdout=StringIO())
    token = ApiToken.objects.get(name="desk")
    assert [e.kind for e in _grants(token)] == ["token_granted", "token_revoked"]


def test_the_dashboard_mint_and_revoke_write_grant_events(owner_client):
    owner_client.post("/tokens/new/", {"name": "desk", "domains": "home", "read_only": "1"})
    owner_client.post("/tokens/", {"name": "desk", "confirmed": "yes"})
    token = ApiToken.objects.get(name="desk")
    assert token.revoked_at is not None
    assert [e.kind for e in _grants(token)] == ["token_granted", "token_revoked"]


def test_tokens_as_granted_pass(db):
    create_token(name="scout", domains=["personal"])
    create_token(name="desk", domains=["home"], read_only=True)
    revoke_token(name="desk")
    assert tokens_disagree_with_grant() == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ("""domains = '["personal", "sealed-work"]'""", "domains"),
        ("read_only = FALSE", "read_only"),
        ("revoked_at = NULL", "revoked_at"),
        ("name = 'renamed'", "name"),
        ("token_hash = '" + "0" * 64 + "'", "token_hash"),
    ],
)
def test_integrity_names_a_token_changed_behind_the_orm(db, change, field):
    token, _ = create_token(name="scout", domains=["personal"], read_only=True)
    revoke_token(name="scout")
    assert tokens_disagree_with_grant() == []  # as granted, before the edit
    drop_trigger("memory_apitoken_grant_immutable")  # as one holding the database could
    drop_trigger("memory_apitoken_governed_after_grant")
    raw(f"UPDATE memory_apitoken SET {change} WHERE id = %s", (token.pk,))
    assert tokens_disagree_with_grant() == [f"token {token.pk}: {field} differ from its grant"]


def test_integrity_names_a_token_with_no_grant(db):
    raw(
        "INSERT INTO memory_apitoken (name, token_hash, prefix, domains, read_only, created_at)"
        " VALUES ('stray', %s, 'grv_x', '[\"personal\"]', FALSE, '2026-01-01 00:00:00')",
        ("1" * 64,),
    )
    (stray,) = ApiToken.objects.filter(name="stray").values_list("pk", flat=True)
    assert tokens_disagree_with_grant() == [f"token {stray} has no grant event: it is on no chain"]


def test_a_token_with_no_grant_does_not_end_the_check_of_the_next(db):
    raw(
        "INSERT INTO memory_apitoken (name, token_hash, prefix, domains, read_only, created_at)"
        " VALUES ('stray', %s, 'grv_x', '[\"personal\"]', FALSE, '2026-01-01 00:00:00')",
        ("1" * 64,),
    )
    (stray,) = ApiToken.objects.filter(name="stray").values_list("pk", flat=True)
    token, _ = create_token(name="scout", domains=["personal"], read_only=True)
    drop_trigger("memory_apitoken_grant_immutable")
    drop_trigger("memory_apitoken_governed_after_grant")
    raw("UPDATE memory_apitoken SET read_only = FALSE WHERE id = %s", (token.pk,))
    assert tokens_disagree_with_grant() == [
        f"token {stray} has no grant event: it is on no chain",
        f"token {token.pk}: read_only differ from its grant",
    ]


def test_integrity_names_every_field_changed_at_once(db):
    token, _ = create_token(name="scout", domains=["personal"], read_only=True)
    drop_trigger("memory_apitoken_grant_immutable")
    drop_trigger("memory_apitoken_governed_after_grant")
    raw("UPDATE memory_apitoken SET name = 'renamed', read_only = FALSE WHERE id = %s", (token.pk,))
    assert tokens_disagree_with_grant() == [
        f"token {token.pk}: name, read_only differ from its grant"
    ]


def test_a_revocation_recorded_in_another_offset_is_the_same_instant(db):
    """A grant's clock is compared as an instant: the same moment spelled with another UTC
    offset (as another engine or session may spell it) is no disagreement."""
    import json
    from datetime import datetime, timedelta, timezone

    token, _ = create_token(name="scout", domains=["personal"])
    revoke_token(name="scout")
    revoked = _grants(token)[-1]
    moment = datetime.fromisoformat(revoked.detail["revoked_at"])
    detail = {
        **revoked.detail,
        "revoked_at": moment.astimezone(timezone(timedelta(hours=2))).isoformat(),
    }
    drop_trigger("memory_event_no_update")
    raw("UPDATE memory_event SET detail = %s WHERE id = %s", (json.dumps(detail), revoked.pk))
    assert tokens_disagree_with_grant() == []


def test_the_migration_grants_each_token_minted_before_it(real_db):
    from django.core.management import call_command

    call_command("migrate", "memory", "0023", verbosity=0)
    raw(
        "INSERT INTO memory_apitoken (name, token_hash, prefix, domains, read_only, created_at,"
        " revoked_at) VALUES ('old', %s, 'grv_old', '[\"home\"]', TRUE, '2026-01-01 00:00:00',"
        " '2026-01-02 00:00:00')",
        ("2" * 64,),
    )
    call_command("migrate", verbosity=0)
    old = ApiToken.objects.get(name="old")
    (grant,) = _grants(old)
    assert grant.kind == "token_granted" and grant.reason == "backfill"
    assert tokens_disagree_with_grant() == [] and verify().ok
    assert raw_index_names() >= {"memory_event_batch"}


def raw_index_names() -> set[str]:
    """memory_event's indexes: a rebuild of the table (SQLite) must keep the raw ones too."""
    from django.db import connection

    with connection.cursor() as cursor:
        return set(connection.introspection.get_constraints(cursor, "memory_event"))
