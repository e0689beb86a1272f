from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.db import transaction

from memory.errors import Invalid, TooLarge
from memory.models import Event, Node
from memory.write import ScrollPointer, content_key_of, scrub, write_node


def test_it_refuses_a_naive_referent_time(make_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="no time zone offset"):
        make_note("Met Ana at the lake.", referent_time="2024-05-08T13:56:00")
    assert counts() == before


def test_it_refuses_an_unparseable_referent_time(make_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="not an ISO 8601"):
        make_note("Met Ana at the lake.", referent_time="last tuesday")
    assert counts() == before


def test_it_stores_referent_time_in_utc(make_note):
    node = make_note("Met Ana at the lake.", referent_time="2024-05-08T13:56:00+02:00")
    node.refresh_from_db()
    assert node.referent_time == datetime(2024, 5, 8, 11, 56, tzinfo=UTC)


def test_it_accepts_z_as_utc(make_note):
    node = make_note("Zulu time.", referent_time="2024-05-08T13:56:00Z")
    assert node.referent_time == datetime(2024, 5, 8, 13, 56, tzinfo=UTC)


def _back_dated(root_note, created_at: datetime) -> Node:
    origins = [{"id": root_note.pk, "relation": "derived_from"}]
    return write_node(
        body="Back-dated.",
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=origins,
        created_at=created_at,
    ).node


def test_a_back_dated_arrival_is_kept_in_utc_on_the_row_and_in_its_snapshot(root_note):
    # An importer's clock in another zone: the arrival's snapshot says what the row says (UTC),
    # not the caller's offset (mutmut's write._insert 46 and 53 found the two disagreeing).
    east = timezone(timedelta(hours=2))
    node = _back_dated(root_note, datetime(2026, 1, 2, 5, 4, 5, tzinfo=east))
    snapshot = Event.objects.get(node=node, kind="arrived").snapshot
    node.refresh_from_db()
    assert node.created_at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert snapshot["created_at"] == "2026-01-02T03:04:05+00:00" == node.created_at.isoformat()


def test_it_refuses_a_naive_created_at(root_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="created_at .* no time zone offset"):
        _back_dated(root_note, datetime(2026, 1, 2, 5, 4, 5))
    assert counts() == before


def test_scrub_removes_think_tags_but_keeps_the_claim():
    raw = (
        "<think>maybe she said Tuesday?</think>Ana moves to Lisbon in June.<system>be nice</system>"
    )
    assert scrub(raw) == "Ana moves to Lisbon in June."


def test_it_stores_the_scrubbed_body_and_its_hash(make_note):
    import hashlib

    node = make_note("<think>hmm</think> The boiler is serviced in March. ")
    assert node.body == "The boiler is serviced in March."
    assert node.body_hash == hashlib.sha256(node.body.encode()).hexdigest()


def test_content_key_folds_case_width_and_whitespace():
    assert content_key_of("Ｃafé  is\nOPEN") == content_key_of("café is open")


def test_it_refuses_a_non_pair_without_origins(db, counts):
    before = counts()
    with pytest.raises(Invalid, match="needs at least one origin"):
        write_node(body="Orphan thought", kind="note", jurisdiction="home", signature="owner")
    assert counts() == before


def test_it_refuses_an_unsigned_write(make_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="signature is required"):
        make_note("Who said this?", signature="   ")
    assert counts() == before


def test_it_refuses_an_unknown_kind(make_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="unknown kind 'rumour'"):
        make_note("A rumour.", kind="rumour")
    assert counts() == before


def test_it_refuses_an_unknown_jurisdiction(make_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="unknown jurisdiction"):
        make_note("Somewhere else.", jurisdiction="abroad")
    assert counts() == before


def test_it_refuses_an_unknown_edge_kind(make_note, root_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="unknown edge_kind 'likes'"):
        make_note("Edgy.", origins=[{"id": root_note.pk, "relation": "likes"}])
    assert counts() == before


def test_it_refuses_an_unknown_origin(make_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="unknown origin"):
        make_note("From nowhere.", origins=[{"id": 987654, "relation": "derived_from"}])
    assert counts() == before


def test_it_refuses_an_oversized_body(make_note, counts, settings):
    settings.GROVE_MAX_BODY_CHARS = 100
    before = counts()
    with pytest.raises(TooLarge):
        make_note("x" * 101)
    assert counts() == before


def test_it_refuses_a_body_that_is_only_scaffolding(make_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="empty"):
        make_note("<think>nothing to say</think>")
    assert counts() == before


def test_it_refuses_a_pair_without_a_scroll_pointer(db, counts):
    before = counts()
    with pytest.raises(Invalid, match="scroll pointer"):
        write_node(body="u: hi\na: hello", kind="pair", jurisdiction="home", signature="owner")
    assert counts() == before


def test_it_accepts_a_pair_with_a_scroll_pointer(db):
    pointer = ScrollPointer(path="scroll/c1.jsonl", offset=0, hash="a" * 64)
    node = write_node(
        body="u: hi\na: hello", kind="pair", jurisdiction="home", signature="owner", scroll=pointer
    ).node
    assert (node.scroll_path, node.scroll_offset, node.scroll_hash) == (
        "scroll/c1.jsonl",
        0,
        "a" * 64,
    )


def test_it_returns_the_live_duplicate_instead_of_a_copy(make_note):
    first = make_note("The spare key is under the blue pot.")
    again = write_node(
        body="the spare key is  under the BLUE pot.",
        kind="note",
        jurisdiction="home",
        signature="agent:helper",
        origins=[{"id": first.pk - 1, "relation": "cites"}],
    )
    assert again.status == "duplicate"
    assert again.node.pk == first.pk
    assert Node.objects.filter(content_key=first.content_key).count() == 1


def test_it_revives_decayed_content_instead_of_creating_a_node(make_note, root_note):
    from memory import audit

    node = make_note("Buy the green tiles.")
    with transaction.atomic():
        Node.objects.filter(pk=node.pk).update(decayed_at=node.created_at)
        audit.record("decayed", node=node, actor="sleep", reason="age_no_access")
    result = write_node(
        body="Buy the green tiles.",
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": root_note.pk, "relation": "derived_from"}],
    )
    assert result.status == "revived"
    assert result.node.pk == node.pk
    result.node.refresh_from_db()
    assert result.node.decayed_at is None
    assert result.node.access_count == 1
    assert list(Event.objects.filter(node=node).order_by("id").values_list("kind", flat=True)) == [
        "arrived",
        "decayed",
        "revived",
    ]


def test_occurrences_are_never_merged(db, root_note):
    kwargs = dict(
        kind="utterance",
        jurisdiction="wild",
        signature="Ana",
        origins=[{"id": root_note.pk, "relation": "derived_from"}],
    )
    first = write_node(body="Yes!", **kwargs)
    second = write_node(body="Yes!", **kwargs)
    assert first.node.pk != second.node.pk
    assert second.status == "created"


def test_duplicates_are_per_domain(make_note):
    a = make_note("Same words, two rooms.", domain="work")
    b = make_note("Same words, two rooms.", domain="personal")
    assert a.pk != b.pk


@pytest.mark.sqlite_only  # FTS5's table; PostgreSQL's tsvector: tests/schema/test_postgres.py
def test_the_fts_row_is_written_with_the_node(make_note):
    from django.db import connection

    node = make_note("Quokkas are marsupials.")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rowid FROM memory_node_fts WHERE memory_node_fts MATCH ?", ["quokkas"]
        )
        assert cursor.fetchall() == [(node.pk,)]


def test_the_duplicate_lookup_reads_by_content_key(make_note):
    """A store is never ANALYZEd: without statistics SQLite preferred memory_node_kind_domain to
    the content key and read every note of the domain on each write (1M: ~0.3 s a write)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if connection.vendor != "sqlite":
        pytest.skip("SQLite's planner, without statistics")
    first = make_note("Said once.")
    with CaptureQueriesContext(connection) as queries:
        again = make_note("Said once.")
    assert again.pk == first.pk, "the second write is the same node"
    keyed = [q["sql"] for q in queries.captured_queries if '"content_key" =' in q["sql"]]
    assert keyed, "the write looked its content key up"
    with connection.cursor() as cursor:
        for sql in keyed:
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
            plan = " ".join(str(row[-1]) for row in cursor.fetchall())
            assert "memory_node_content_key" in plan, plan
