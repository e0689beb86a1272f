"""PostgreSQL's own forms of attack and its word index (migration 0013, memory/recall/fts_pg.py).

The invariants common to both engines are attacked in tests/schema/test_invariants.py and
tests/custody/test_raw_sql.py, which run on either; these are the statements only PostgreSQL has.
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from memory.models import Edge, Event, Node
from memory.recall import fts_pg, recall
from memory.visibility import Visibility
from tests._helpers.acts import root_as_owner
from tests._helpers.vendor import raw

pytestmark = pytest.mark.postgres_only


def node_columns() -> str:
    """memory_node's columns but the generated tsvector (which no INSERT may name)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = "
            "'memory_node' AND is_generated = 'NEVER' ORDER BY ordinal_position"
        )
        return ", ".join(row[0] for row in cursor.fetchall())


def refused(sql: str, params: tuple = (), match: str = "") -> None:
    with pytest.raises(DatabaseError, match=match):
        raw(sql, params, checks_now=True)


@pytest.fixture
def ground(make_note) -> Node:
    node = make_note("The well is 40 metres deep.")
    root_as_owner(node)
    return node


# --- INSERT ... ON CONFLICT DO UPDATE is an UPDATE, and meets the update guards --------------


def test_upsert_cannot_rewrite_a_nodes_body(ground):
    refused(
        f"INSERT INTO memory_node ({node_columns()}) SELECT {node_columns()} FROM memory_node "
        "WHERE id = %s ON CONFLICT (id) DO UPDATE SET body = 'The well is dry.'",
        (ground.pk,),
        "memory_node_immutable",
    )
    ground.refresh_from_db()
    assert ground.body == "The well is 40 metres deep."


def test_upsert_cannot_turn_a_rooted_event_into_another(ground):
    rooted = Event.objects.get(node=ground, kind="rooted")
    refused(
        "INSERT INTO memory_event (id, at, kind, node_id, actor, reason, snapshot, detail) "
        "VALUES (%s, now(), 'kept', %s, 'forger', '', '{}', '{}') "
        "ON CONFLICT (id) DO UPDATE SET kind = 'kept'",
        (rooted.pk, ground.pk),
        "append_only",
    )
    assert Event.objects.get(pk=rooted.pk).kind == "rooted"


def test_upsert_cannot_change_an_edges_kind(make_note):
    edge = Edge.objects.get(from_node=make_note("Edged."))
    refused(
        "INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at, created_by) "
        "VALUES (%s, %s, %s, 1, now(), 'forger') "
        "ON CONFLICT (from_node_id, to_node_id, kind) DO UPDATE SET kind = 'cites'",
        (edge.from_node_id, edge.to_node_id, edge.kind),
        "memory_edge_no_replace",
    )
    assert Edge.objects.get(pk=edge.pk).kind == "derived_from"


def test_upsert_of_a_lifecycle_flag_is_an_ordinary_update(make_note):
    """The guards refuse what an UPDATE may not do, no more: access_count may change."""
    note = make_note("Read me.")
    raw(
        f"INSERT INTO memory_node ({node_columns()}) SELECT {node_columns()} FROM memory_node "
        "WHERE id = %s ON CONFLICT (id) DO UPDATE SET access_count = 2",
        (note.pk,),
        checks_now=True,
    )
    note.refresh_from_db()
    assert note.access_count == 2


# --- TRUNCATE fires no row trigger: its own guard, which only a test flush passes ---------------


@pytest.mark.parametrize(
    "table",
    ["memory_node", "memory_edge", "memory_event", "memory_recalllog", "memory_chaincheckpoint"],
)
def test_truncate_is_refused(make_note, table):
    make_note("Kept.")
    refused(f"TRUNCATE {table} CASCADE", (), f"{table}_no_truncate")
    assert Node.objects.count() == 2  # the root note and this one


def test_the_flush_setting_lets_truncate_through_for_its_transaction_only(make_note):
    make_note("Kept.")

    class Undo(Exception):
        pass

    with pytest.raises(Undo), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET LOCAL grove.allow_flush = 'on'")
        cursor.execute("TRUNCATE memory_node CASCADE")
        cursor.execute("SELECT count(*) FROM memory_node")
        assert cursor.fetchone()[0] == 0
        raise Undo  # roll the truncate back: TRUNCATE is transactional on PostgreSQL
    assert Node.objects.count() == 2
    refused("TRUNCATE memory_node CASCADE", (), "memory_node_no_truncate")


def test_every_trigger_of_migration_0013_is_installed(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        names = {row[0] for row in cursor.fetchall()}
    assert {
        "memory_node_immutable",
        "memory_node_permanent_one_way",
        "memory_node_permanent_never_decays",
        "memory_node_no_delete",
        "memory_edge_immutable",
        "memory_edge_no_replace_pair",
        "memory_event_no_update",
        "memory_event_no_delete",
        "memory_event_rooted_hash_matches",
        "memory_event_no_second_verdict",
        "memory_recalllog_no_update",
        "memory_chaincheckpoint_no_update",
        "memory_node_no_truncate",
        "memory_event_no_truncate",
    } <= names


# --- the word index -----------------------------------------------------------------------


def test_the_tsvector_follows_the_body_stemmed(make_note):
    note = make_note("Herons were nesting by the mills.")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM memory_node WHERE body_tsv @@ plainto_tsquery('english', 'nest mill')"
        )
        assert [row[0] for row in cursor.fetchall()] == [note.pk]


def test_words_are_ored_and_both_words_rank_first(make_note):
    both = make_note("The heron nests by the mill pond.")
    one = make_note("A heron stood in the rain.")
    other = make_note("The mill wheel turns slowly.")
    make_note("Nothing about birds here.")
    where, params = Visibility.of(domains=None, scope="both", as_of=None).sql("n")
    hits = fts_pg.candidates(["heron", "mill"], where, params, 10)
    assert next(i for i, _ in hits) == both.pk
    assert {i for i, _ in hits} == {both.pk, one.pk, other.pk}


def test_query_syntax_is_only_text(make_note):
    note = make_note("Cats & dogs: a truce (mostly).")
    where, params = Visibility.of(domains=None, scope="both", as_of=None).sql("n")
    for query in ["cats & !dogs", "truce:*", "dogs | (", "'"]:
        terms = [query]
        hits = fts_pg.candidates(terms, where, params, 10)
        assert all(i == note.pk for i, _ in hits)


def test_recall_finds_through_the_tsvector(make_note):
    note = make_note("The boiler pressure dropped overnight.")
    make_note("Unrelated words entirely.")
    assert note.pk in [p["id"] for p in recall("boiler pressure")]


def test_a_script_without_spaces_is_found_as_a_substring(make_note):
    note = make_note("東京タワーは赤い")
    where, params = Visibility.of(domains=None, scope="both", as_of=None).sql("n")
    assert [i for i, _ in fts_pg.substring_candidates("東京", where, params, 10)] == [note.pk]
    assert fts_pg.substring_candidates("100%", where, params, 10) == []
    assert fts_pg.has_trigram_index()


def test_integrity_reports_a_missing_word_index(make_note):
    from memory.custody.integrity import run_checks

    make_note("Searchable words.")
    assert run_checks(["fts_out_of_sync"])[0].ok
    raw("DROP INDEX memory_node_body_tsv", checks_now=True)  # rolled back with the test
    (result,) = run_checks(["fts_out_of_sync"])
    assert result.violations == ["the full-text index memory_node_body_tsv is missing"]
