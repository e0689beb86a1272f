from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memory.errors import NotFound
from memory.models import Node, PendingCite
from memory.read import read


def mark(node: Node, kind: str) -> None:
    """A raw-SQL fixture for an audit event (ceremonies and decay write these in real life)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) "
            "VALUES (%s, %s, %s, 'fixture', '', '{}', '{}')",
            [timezone.now(), kind, node.pk],
        )
        if kind == "decayed":
            cursor.execute(
                "UPDATE memory_node SET decayed_at = %s WHERE id = %s", [timezone.now(), node.pk]
            )


def test_it_returns_the_full_body_led_by_jurisdiction(make_note):
    body = "The heron " + "waits " * 100
    note = make_note(body)
    result = read(note.pk)
    assert list(result)[0] == "jurisdiction"
    assert result["body"] == body.strip() and result["trust"] == "unreviewed"


def test_it_counts_one_access_and_stamps_the_time(make_note):
    note = make_note("The heron.")
    read(note.pk)
    read(note.pk)
    note.refresh_from_db()
    assert note.access_count == 2
    assert timezone.now() - note.last_accessed_at < timedelta(seconds=5)


@pytest.mark.parametrize("kind", ["decayed", "sealed", "rejected"])
def test_a_hidden_node_reads_as_not_found_and_is_not_counted(make_note, kind):
    note = make_note("The heron secret.")
    assert read(note.pk)["id"] == note.pk
    mark(note, kind)
    with pytest.raises(NotFound) as refused:
        read(note.pk)
    assert "heron" not in refused.value.message
    note.refresh_from_db()
    assert note.access_count == 1


def test_a_node_outside_the_callers_domains_does_not_exist(make_note):
    note = make_note("The heron project.", domain="work")
    assert read(note.pk, domains=["work"])["id"] == note.pk
    with pytest.raises(NotFound) as outside:
        read(note.pk, domains=["personal"])
    with pytest.raises(NotFound) as missing:
        read(10**9, domains=["personal"])
    assert outside.value.message.replace(str(note.pk), "N") == missing.value.message.replace(
        str(10**9), "N"
    )


def test_as_of_before_creation_is_not_found(make_note):
    note = make_note("The heron.", days_old=1)
    with pytest.raises(NotFound):
        read(note.pk, as_of=timezone.now() - timedelta(days=2))


def test_reading_a_wild_node_pends_a_cite_for_the_holder(make_note):
    wild = make_note("An article about herons.", kind="hearsay", jurisdiction="wild")
    home = make_note("My heron note.")
    read(wild.pk, actor="agent-7", holder="agent-7")
    read(home.pk, actor="agent-7", holder="agent-7")
    assert list(PendingCite.objects.values_list("holder", "node_id")) == [("agent-7", wild.pk)]


def test_the_owner_browsing_a_wild_node_pends_no_cite(make_note):
    wild = make_note("An article about herons.", kind="hearsay", jurisdiction="wild")
    assert read(wild.pk, actor="owner")["access_count"] == 1
    assert not PendingCite.objects.exists()
