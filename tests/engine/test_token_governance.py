"""The owner governs a token after minting: each change is a grant on the chain, and the row
is held to it by integrity."""

from __future__ import annotations

import pytest
from django.db import connection

from memory.custody.integrity import tokens_disagree_with_grant
from memory.errors import Invalid, NotFound
from memory.models import ApiToken, Event, EventKind
from memory.tokens import CHANGED, change_token, create_token, revoke_token
from tests._helpers.vendor import drop_trigger

pytestmark = pytest.mark.django_db


def _grants(token: ApiToken) -> list[Event]:
    return [
        e
        for e in Event.objects.filter(kind=EventKind.TOKEN_GRANTED).order_by("id")
        if e.detail.get("token") == token.pk
    ]


def test_every_governing_act_is_a_grant_on_the_record():
    token, _ = create_token(name="scout", domains=["personal"])
    change_token(name="scout", muted=True)
    change_token(name="scout", auto_decline=True)
    change_token(name="scout", write_limit=5)
    change_token(name="scout", domains=["work", "personal"], read_only=True)
    grants = _grants(token)
    assert [g.reason for g in grants] == ["", CHANGED, CHANGED, CHANGED, CHANGED]
    assert [g.detail["changed"] for g in grants[1:]] == [
        ["muted"],
        ["auto_decline"],
        ["write_limit"],
        ["domains", "read_only"],
    ]
    assert grants[-1].detail["domains"] == ["work", "personal"]
    assert grants[-1].detail["write_limit"] == 5 and grants[-1].actor == "owner"
    assert tokens_disagree_with_grant() == []


def test_a_change_that_changes_nothing_writes_nothing():
    create_token(name="scout", domains=["personal"])
    before = Event.objects.count()
    _token, changed = change_token(name="scout", domains=["personal"], muted=False)
    assert changed == [] and Event.objects.count() == before


def test_integrity_names_a_mute_lifted_behind_the_grant():
    create_token(name="scout", domains=["personal"])
    change_token(name="scout", muted=True, write_limit=3)
    # The guard refuses this edit (tests/schema/test_token_guard.py); one holding the database
    # file could drop it first, and integrity must still name the change.
    drop_trigger("memory_apitoken_grant_immutable")
    drop_trigger("memory_apitoken_governed_after_grant")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memory_apitoken SET muted = %s, write_limit = 0", [False])
    [problem] = tokens_disagree_with_grant()
    assert "muted" in problem and "write_limit" in problem


def test_it_refuses_a_revoked_token_no_domains_and_a_bad_limit():
    create_token(name="scout", domains=["personal"])
    with pytest.raises(Invalid):
        change_token(name="scout", domains=[])
    with pytest.raises(Invalid):
        change_token(name="scout", write_limit=-1)
    revoke_token(name="scout")
    with pytest.raises(NotFound):
        change_token(name="scout", muted=True)
