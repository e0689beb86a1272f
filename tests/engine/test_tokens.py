from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory.errors import Invalid
from memory.models import ApiToken
from memory.tokens import (
    Unauthorized,
    active_token,
    authenticate,
    create_token,
    revoke_token,
)


def _create(*args: str) -> str:
    out = StringIO()
    call_command("token", "create", *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def test_it_stores_only_the_hash_of_the_secret(db):
    token, secret = create_token(name="scout", domains=["personal"])
    row = ApiToken.objects.values().get(pk=token.pk)
    assert row["token_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(row.values())
    assert secret.startswith(row["prefix"])


def test_the_command_prints_a_secret_that_authenticates(db):
    secret = _create("scout", "--domain", "work", "--domain", "garden", "--read-only")
    token = authenticate(f"Bearer {secret}")
    assert (token.name, token.domains, token.read_only) == ("scout", ["work", "garden"], True)


def test_it_refuses_a_token_without_a_domain(db):
    with pytest.raises(CommandError, match="at least one domain"):
        _create("scout")
    assert not ApiToken.objects.exists()


def test_it_refuses_a_taken_name(db):
    create_token(name="scout", domains=["personal"])
    with pytest.raises(Invalid, match="already exists"):
        create_token(name="scout", domains=["work"])


def test_a_revoked_token_no_longer_authenticates(db):
    _, secret = create_token(name="scout", domains=["personal"])
    assert authenticate(f"Bearer {secret}").name == "scout"
    call_command("token", "revoke", "scout", stdout=StringIO())
    with pytest.raises(Unauthorized):
        authenticate(f"Bearer {secret}")


def test_revoking_twice_keeps_the_first_time(db):
    create_token(name="scout", domains=["personal"])
    first = revoke_token(name="scout").revoked_at
    assert revoke_token(name="scout").revoked_at == first


def test_it_refuses_malformed_headers(db):
    for header in (None, "", "Token abc", "Bearer ", "Bearer grv_not-a-token"):
        with pytest.raises(Unauthorized):
            authenticate(header)


def test_the_list_shows_names_and_prefixes_never_secrets(db):
    secret = _create("scout", "--domain", "personal")
    call_command("token", "revoke", "scout", stdout=StringIO())
    out = StringIO()
    call_command("token", "list", stdout=out)
    line = out.getvalue()
    assert "scout" in line and "revoked" in line and secret[:12] in line
    assert secret not in line


def test_the_dashboard_lists_tokens_without_secrets(owner_client):
    _, secret = create_token(name="scout", domains=["personal", "work"], read_only=True)
    page = owner_client.get("/tokens/").content.decode()
    assert "scout" in page and "personal, work" in page and "read-only" in page
    assert secret[:12] in page and secret not in page


def test_the_owner_revokes_a_token_from_the_dashboard(owner_client):
    _, secret = create_token(name="scout", domains=["personal"])
    asked = owner_client.post("/tokens/", {"name": "scout"})
    assert "What revoking does" in asked.content.decode()
    assert authenticate(f"Bearer {secret}").name == "scout"
    response = owner_client.post("/tokens/", {"name": "scout", "confirmed": "yes"})
    assert response.status_code == 302
    with pytest.raises(Unauthorized):
        authenticate(f"Bearer {secret}")


def test_the_tokens_page_needs_a_login(client, db):
    create_token(name="scout", domains=["personal"])
    response = client.get("/tokens/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_bad_token_name_and_no_domain_are_refused_by_word_and_code(db) -> None:
    with pytest.raises(Invalid) as refused:
        create_token(name="no spaces", domains=["personal"])
    assert refused.value.message == "token name must be 1-100 letters, digits, '.', '_' or '-'"
    with pytest.raises(Invalid) as bare:
        create_token(name="bare", domains=[])
    assert bare.value.code == "no_domain"


def test_revoking_one_token_leaves_the_others_live(db) -> None:
    create_token(name="scout", domains=["personal"])
    create_token(name="desk", domains=["personal"])
    revoke_token(name="scout")
    assert ApiToken.objects.get(name="scout").revoked_at is not None
    assert ApiToken.objects.get(name="desk").revoked_at is None
    assert active_token(name="desk").name == "desk"


def test_an_active_token_is_found_by_its_own_name_and_an_unknown_name_is_named(db) -> None:
    create_token(name="scout", domains=["personal"])
    desk, _ = create_token(name="desk", domains=["work"])
    assert active_token(name="desk").pk == desk.pk
    with pytest.raises(Unauthorized) as unknown:
        active_token(name="nobody")
    assert unknown.value.message == "no active token named 'nobody'"


def test_token_refusals_carry_their_codes_and_words(db) -> None:
    with pytest.raises(Invalid) as bad_name:
        create_token(name="no spaces", domains=["personal"])
    assert bad_name.value.code == "bad_token_name"
    with pytest.raises(Invalid) as bad_domain:
        create_token(name="scout", domains=["no spaces"])
    assert bad_domain.value.message == "domain 'no spaces' is not a valid label"
    with pytest.raises(Invalid) as bare:
        create_token(name="scout", domains=[])
    assert bare.value.message == "a token needs at least one domain (--domain)"


def test_a_secret_carries_32_random_bytes(db) -> None:
    _, secret = create_token(name="scout", domains=["personal"])
    assert secret.startswith("grv_") and len(secret) == len("grv_") + 43  # 32 bytes, base64


def test_a_bearer_header_is_split_at_its_first_space(db) -> None:
    token, secret = create_token(name="scout", domains=["personal"])
    assert authenticate(f"Bearer  {secret}").pk == token.pk  # the secret is stripped
    with pytest.raises(Unauthorized) as two_words:
        authenticate(f"Bearer {secret} extra")
    assert two_words.value.code == "bad_token"
    with pytest.raises(Unauthorized) as basic:
        authenticate(f"Basic {secret}")
    assert basic.value.code == "no_token"


def test_authenticate_stores_the_last_use_at_most_once_a_minute(db, monkeypatch) -> None:
    token, secret = create_token(name="scout", domains=["personal"])
    tick = datetime.now(UTC)
    monkeypatch.setattr("django.utils.timezone.now", lambda: tick)
    authenticate(f"Bearer {secret}")
    token.refresh_from_db()
    assert token.last_used_at == tick
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=tick - timedelta(minutes=1))
    authenticate(f"Bearer {secret}")  # exactly a minute: not yet stamped again
    token.refresh_from_db()
    assert token.last_used_at == tick - timedelta(minutes=1)


def test_an_active_token_is_found_by_name_until_it_is_revoked(db) -> None:
    from memory.errors import NotFound

    token, _ = create_token(name="desk", domains=["personal"])
    assert active_token(name="desk").pk == token.pk
    revoke_token(name="desk")
    with pytest.raises(Unauthorized):
        active_token(name="desk")
    with pytest.raises(NotFound) as unknown:
        revoke_token(name="nobody")
    assert "nobody" in unknown.value.message


def test_token_refusals_carry_their_codes_and_say_what_to_send(db) -> None:
    create_token(name="desk", domains=["personal"])
    with pytest.raises(Invalid) as taken:
        create_token(name="desk", domains=["personal"])
    assert taken.value.code == "token_exists"
    with pytest.raises(Invalid) as bad:
        create_token(name="desk2", domains=["not a label!"])
    assert bad.value.code == "bad_domain"
    with pytest.raises(Unauthorized) as missing:
        authenticate(None)
    assert missing.value.message == "send 'Authorization: Bearer <token>'"
