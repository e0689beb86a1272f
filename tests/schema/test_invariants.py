"""Each database invariant, attacked with raw SQL: the database itself must refuse."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from memory import audit
from memory.models import Edge, Event, Node
from tests._helpers.vendor import raw


def refused(sql: str, params: tuple = (), match: str = "") -> None:
    with pytest.raises(DatabaseError, match=match):
        raw(sql, params)


@pytest.fixture
def note(make_note) -> Node:
    return make_note("The shed key hangs by the back door.")


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("body", "'rewritten'"),
        ("body_hash", "'" + "0" * 64 + "'"),
        ("content_key", "'" + "0" * 64 + "'"),
        ("jurisdiction", "'wild'"),
        ("kind", "'journal'"),
        ("domain", "'work'"),
        ("signature", "'someone else'"),
        ("source", "'forged.md'"),
        ("created_at", "'2001-01-01 00:00:00'"),
        ("referent_time", "'2001-01-01 00:00:00'"),
        # The trigger fires for an UPDATE OF these columns (0016): each must be in its list.
        ("id", "id + 100000"),
        ("scroll_path", "'forged.jsonl'"),
        ("scroll_offset", "7"),
        ("scroll_hash", "'" + "0" * 64 + "'"),
        ("token_id", "999999"),
    ],
)
def test_it_refuses_updating_an_immutable_node_column(note, column, value):
    refused(f"UPDATE memory_node SET {column} = {value} WHERE id = %s", (note.pk,), "immutable")
    note.refresh_from_db()
    assert note.body == "The shed key hangs by the back door."


def test_it_allows_updating_the_lifecycle_flags(note):
    raw("UPDATE memory_node SET access_count = 3 WHERE id = %s", (note.pk,))
    note.refresh_from_db()
    assert note.access_count == 3


def test_it_refuses_deleting_a_node(note):
    refused("DELETE FROM memory_node WHERE id = %s", (note.pk,), "never deleted")
    assert Node.objects.filter(pk=note.pk).exists()


def test_it_refuses_deleting_an_edge(note):
    edge = Edge.objects.get(from_node=note)
    refused("DELETE FROM memory_edge WHERE id = %s", (edge.pk,), "never deleted")


def test_it_refuses_changing_an_edges_endpoints(note, root_note):
    edge = Edge.objects.get(from_node=note)
    refused("UPDATE memory_edge SET kind = 'cites' WHERE id = %s", (edge.pk,), "never change")


def _event(note) -> int:
    with transaction.atomic():
        return audit.record("kept", node=note, actor="owner").pk


def test_it_refuses_updating_an_event(note):
    event_id = _event(note)
    refused("UPDATE memory_event SET actor = 'x' WHERE id = %s", (event_id,), "append_only")


def test_it_refuses_deleting_an_event(note):
    event_id = _event(note)
    refused("DELETE FROM memory_event WHERE id = %s", (event_id,), "append_only")


def test_it_refuses_deleting_a_recall_log(db):
    raw(
        "INSERT INTO memory_recalllog (at, actor, query, scope, domains, result_ids, took_ms) "
        "VALUES ('2026-01-01', 'owner', 'q', 'home', '[]', '[]', 0)"
    )
    refused("DELETE FROM memory_recalllog", (), "append_only")
    refused("UPDATE memory_recalllog SET query = 'other'", (), "append_only")


def test_it_refuses_setting_permanent_back_to_false(note):
    raw(
        "UPDATE memory_node SET permanent = TRUE, permanent_at = '2026-01-01' WHERE id = %s",
        (note.pk,),
    )
    refused("UPDATE memory_node SET permanent = FALSE WHERE id = %s", (note.pk,), "never reverts")


def test_it_refuses_decaying_a_permanent_node(note):
    raw(
        "UPDATE memory_node SET permanent = TRUE, permanent_at = '2026-01-01' WHERE id = %s",
        (note.pk,),
    )
    refused(
        "UPDATE memory_node SET decayed_at = '2026-02-01' WHERE id = %s", (note.pk,), "cannot decay"
    )


def test_it_refuses_an_edge_to_itself(note):
    refused(
        "INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at, created_by) "
        "VALUES (%s, %s, 'cites', 1, '2026-01-01', 'x')",
        (note.pk, note.pk),
        "memory_edge_no_self_loop",
    )


def test_it_refuses_an_unknown_edge_kind(note, root_note):
    refused(
        "INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at, created_by) "
        "VALUES (%s, %s, 'likes', 1, '2026-01-01', 'x')",
        (root_note.pk, note.pk),
        "memory_edge_kind_valid",
    )


def test_it_refuses_a_duplicate_edge(note, root_note):
    refused(
        "INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at, created_by) "
        "VALUES (%s, %s, 'derived_from', 1, '2026-01-01', 'x')",
        (note.pk, root_note.pk),
        "memory_edge_no_replace",
    )


NODE_INSERT = (
    "INSERT INTO memory_node (body, body_hash, content_key, jurisdiction, kind, domain, signature,"
    " source, metadata, created_at, scroll_path, scroll_offset, scroll_hash, access_count,"
    " permanent) VALUES (%s, %s, %s, %s, %s, 'personal', %s, '', '{}', '2026-01-01', %s, %s, %s,"
    " 0, FALSE)"
)
HEX = "ab" * 32


def insert_node(**overrides) -> None:
    row = {
        "body": "text",
        "body_hash": HEX,
        "content_key": HEX,
        "jurisdiction": "home",
        "kind": "note",
        "signature": "owner",
        "scroll_path": "",
        "scroll_offset": None,
        "scroll_hash": "",
    }
    row.update(overrides)
    raw(NODE_INSERT, tuple(row.values()))


def test_a_well_formed_raw_insert_is_accepted(db):
    insert_node()
    assert Node.objects.count() == 1


@pytest.mark.parametrize(
    ("overrides", "constraint"),
    [
        ({"jurisdiction": "abroad"}, "memory_node_jurisdiction_valid"),
        ({"kind": "rumour"}, "memory_node_kind_valid"),
        ({"body": ""}, "memory_node_body_not_empty"),
        ({"signature": "   "}, "memory_node_signature_not_blank"),
        ({"body_hash": "xyz"}, "memory_node_body_hash_hex64"),
        ({"body_hash": "AB" * 32}, "memory_node_body_hash_hex64"),
        # 66 characters: the CHECK on SQLite (no length limit), varchar(64) on PostgreSQL.
        ({"body_hash": "ab" * 33}, "memory_node_body_hash_hex64|too long for type"),
        ({"kind": "pair"}, "memory_node_pair_has_scroll_pointer"),
    ],
)
def test_it_refuses_a_malformed_node(db, overrides, constraint):
    with pytest.raises(DatabaseError, match=constraint):
        insert_node(**overrides)
    assert Node.objects.count() == 0


def test_it_refuses_a_rooted_event_without_the_matching_hash(note):
    refused(
        "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) VALUES "
        "('2026-01-01', 'rooted', %s, 'owner', '', '{}', %s)",
        (note.pk, '{"body_hash": "' + "0" * 64 + '", "adopting_words": "yes"}'),
        "rooted_hash_matches",
    )


def test_it_allows_only_one_rooted_event_per_node(note):
    detail = f'{{"body_hash": "{note.body_hash}", "adopting_words": "I hold this true"}}'
    sql = (
        "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) VALUES "
        "('2026-01-01', 'rooted', %s, 'owner', '', '{}', %s)"
    )
    raw(sql, (note.pk, detail))
    refused(sql, (note.pk, detail), "second_verdict")


def test_it_allows_only_one_superseded_event_per_node(note):
    sql = (
        "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) VALUES "
        "('2026-01-01', 'superseded', %s, 'owner', '', '{}', '{}')"
    )
    raw(sql, (note.pk,))
    refused(sql, (note.pk,), "second_verdict")


def test_it_refuses_an_unknown_event_kind(note):
    refused(
        "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) VALUES "
        "('2026-01-01', 'deleted', %s, 'owner', '', '{}', '{}')",
        (note.pk,),
        "memory_event_kind_valid",
    )


@pytest.mark.sqlite_only  # WAL is SQLite's journal; PostgreSQL has its own write-ahead log
def test_the_database_file_is_in_wal_mode(db):
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"


def test_a_release_event_is_a_known_kind_and_the_event_table_stays_append_only(db):
    raw(
        "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) VALUES "
        "('2026-01-01', 'decays_released', NULL, 'owner', 'owner_release', '{}', '{}')"
    )
    released = Event.objects.get(kind="decays_released").pk
    refused("UPDATE memory_event SET actor = 'x' WHERE id = %s", (released,), "append_only")
    refused("DELETE FROM memory_event WHERE id = %s", (released,), "append_only")


@pytest.mark.parametrize("kind", ["token_granted", "token_revoked"])
def test_a_token_grant_is_a_known_event_kind(db, kind):
    raw(
        "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) VALUES "
        f"('2026-01-01', '{kind}', NULL, 'owner', '', '{{}}', '{{}}')"
    )
    assert Event.objects.filter(kind=kind).count() == 1
