"""The event table after the rebuild that added an agent's `read` and `recalled` kinds: raw SQL
still meets the kind check and the append-only triggers, and a token's write limit is never
negative."""

from __future__ import annotations

import pytest
from django.db import DatabaseError

from memory.models import Event, EventKind
from memory.tokens import create_token
from tests._helpers.agents import make_agent
from tests._helpers.vendor import drop_trigger, raw

pytestmark = pytest.mark.django_db


@pytest.fixture
def read_event(client, make_note) -> Event:
    node = make_note("The shed key hangs by the back door.")
    agent = make_agent(client)
    agent.get(f"nodes/{node.pk}")
    return Event.objects.get(kind=EventKind.READ)


def test_a_read_event_cannot_be_changed_or_deleted(read_event):
    for sql in (
        "UPDATE memory_event SET actor = 'x' WHERE id = %s",
        "DELETE FROM memory_event WHERE id = %s",
    ):
        with pytest.raises(DatabaseError, match="append_only"):
            raw(sql, (read_event.pk,))


def test_the_kind_check_refuses_a_kind_it_does_not_know(read_event):
    with pytest.raises(DatabaseError, match="memory_event_kind_valid"):
        raw(
            "INSERT INTO memory_event (at, kind, actor, reason, snapshot, detail) "
            "VALUES ('2026-01-01', 'reads', 'agent:x', '', '{}', '{}')"
        )


def test_a_write_limit_below_zero_is_refused(db):
    create_token(name="scout", domains=["personal"])
    drop_trigger("memory_apitoken_governed_after_grant")  # the CHECK alone, not the guard
    with pytest.raises(DatabaseError):
        raw("UPDATE memory_apitoken SET write_limit = -1")
