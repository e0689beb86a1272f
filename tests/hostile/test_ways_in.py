"""The hostile suite: every way in that should be shut, tried, one short test per case."""

from __future__ import annotations

import hashlib

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory import audit
from memory.errors import Conflict, Invalid, TooLarge
from memory.models import CEREMONY_EVENT_KINDS, Edge, Event, Node, Trust
from memory.questions import plant_question
from memory.scroll import commit_turn, read_scroll, read_slice, read_slices, read_tail
from memory.trust import trust_of
from memory.write import ScrollPointer, write_node
from review.ceremony import (
    preview_supersede,
    propose,
    reject,
    root,
    seal,
    supersede,
    unseal,
)
from tests._helpers.acts import root_as_owner, supersede_as_owner
from tests._helpers.realdb import (
    CHILD_PRELUDE,
    run_together,
)

OWNER = "owner"


def _sql(sql: str, params: tuple = ()) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def _insert_node_sql(kind: str = "note", *, scroll: tuple = ("", None, "")) -> None:
    body = f"raw {kind} {scroll}"
    digest = hashlib.sha256(body.encode()).hexdigest()
    _sql(
        """INSERT INTO memory_node (body, body_hash, content_key, jurisdiction, kind, domain,
           signature, source, metadata, created_at, scroll_path, scroll_offset, scroll_hash,
           access_count, permanent) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,0,FALSE)""",
        (body, digest, digest, "home", kind, "personal", "raw", "", "{}", timezone.now(), *scroll),
    )


# --- writes -------------------------------------------------------------------------------


def test_an_unsigned_write_is_refused(root_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="signature is required"):
        write_node(
            body="Anonymous claim.",
            kind="note",
            jurisdiction="home",
            signature="",
            origins=[{"id": root_note.pk}],
        )
    assert counts() == before


def test_an_unsigned_turn_is_refused(db, tmp_path, settings, counts):
    settings.GROVE_SCROLL_DIR = tmp_path
    before = counts()
    with pytest.raises(Invalid, match="signature is required"):
        commit_turn(conversation="c", user="u", assistant="a", signature="\t")
    assert counts() == before and not list(tmp_path.iterdir())


def test_an_orphan_note_is_refused(db, counts):
    before = counts()
    with pytest.raises(Invalid, match="needs at least one origin"):
        write_node(body="From nowhere.", kind="inference", jurisdiction="home", signature="a")
    assert counts() == before


def test_an_orphan_question_is_refused(db, counts):
    before = counts()
    with pytest.raises(Invalid):
        plant_question("Why?", about=[], signature="owner")
    assert counts() == before


def test_a_pair_without_scroll_pointer_is_refused_by_the_write_path(db, counts):
    before = counts()
    with pytest.raises(Invalid, match="scroll pointer"):
        write_node(body="user: hi", kind="pair", jurisdiction="home", signature="owner")
    with pytest.raises(Invalid, match="scroll pointer"):
        write_node(
            body="user: hi",
            kind="pair",
            jurisdiction="home",
            signature="owner",
            scroll=ScrollPointer(path="", offset=0, hash="a" * 64),
        )
    assert counts() == before


def test_a_pair_without_scroll_pointer_is_refused_by_raw_sql(db):
    _insert_node_sql("note")  # the same insert passes for a non-pair
    with pytest.raises(IntegrityError, match="memory_node_pair_has_scroll_pointer"):
        _insert_node_sql("pair")
    with pytest.raises(IntegrityError, match="memory_node_pair_has_scroll_pointer"):
        _insert_node_sql("pair", scroll=("c.jsonl", 0, "not-a-hash"))


def test_an_unknown_edge_kind_is_refused_by_the_write_path(root_note, counts):
    before = counts()
    with pytest.raises(Invalid, match="unknown edge_kind 'likes'"):
        write_node(
            body="Liked it.",
            kind="note",
            jurisdiction="home",
            signature="owner",
            origins=[{"id": root_note.pk, "relation": "likes"}],
        )
    assert counts() == before


def test_an_unknown_edge_kind_is_refused_by_the_orm_and_raw_sql(make_note, root_note):
    node = make_note("Something.")
    with pytest.raises(IntegrityError, match="memory_edge_kind_valid"), transaction.atomic():
        Edge.objects.create(from_node=node, to_node=root_note, kind="likes", created_by="x")
    with pytest.raises(IntegrityError, match="memory_edge_kind_valid"):
        _sql(
            "INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at, "
            "created_by) VALUES (%s, %s, 'likes', 1, %s, 'x')",
            (node.pk, root_note.pk, timezone.now()),
        )
    assert not Edge.objects.filter(kind="likes").exists()


def test_a_self_loop_is_refused_by_raw_sql(make_note):
    node = make_note("Loops.")
    with pytest.raises(IntegrityError, match="memory_edge_no_self_loop"):
        _sql(
            "INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at, "
            "created_by) VALUES (%s, %s, 'cites', 1, %s, 'x')",
            (node.pk, node.pk, timezone.now()),
        )


# --- ceremony events only through the acts ----------------------------------------------


@pytest.mark.parametrize("kind", sorted(CEREMONY_EVENT_KINDS))
def test_a_ceremony_event_from_any_other_module_is_refused(make_note, kind):
    node = make_note("Trust me.")
    refused = pytest.raises(PermissionError, match="written only by the ceremonies")
    with refused, transaction.atomic():
        audit.record(
            kind,
            node=node,
            actor=OWNER,
            detail={"body_hash": node.body_hash, "adopting_words": "yes"},
        )
    assert not Event.objects.filter(kind=kind).exists()
    assert trust_of(node.pk) == Trust.UNREVIEWED


def test_an_agent_cannot_perform_the_owners_acts(make_note):
    from memory.errors import Forbidden

    node = make_note("Trust me.")
    for act in (
        lambda: root(
            node.pk, adopting_words="y", expected_body_hash=node.body_hash, owner="agent:a"
        ),
        lambda: seal(node.pk, owner="agent:a"),
        lambda: unseal(node.pk, owner="agent:a"),
        lambda: reject(node.pk, owner="agent:a", reason="no"),
    ):
        with pytest.raises(Forbidden):
            act()
    assert not Event.objects.filter(node=node).exclude(kind="arrived").exists()


# --- root refusals -------------------------------------------------------------------------


def test_root_with_a_stale_hash_is_refused(make_note):
    node = make_note("The key is under the pot.")
    stale = hashlib.sha256(b"The key is under the mat.").hexdigest()
    with pytest.raises(Conflict, match="stale hash"):
        root(node.pk, adopting_words="yes", expected_body_hash=stale, owner=OWNER)
    assert trust_of(node.pk) == Trust.UNREVIEWED


@pytest.mark.parametrize("bad", ["", "abc", "g" * 64, "a" * 63, None, 12345])
def test_root_with_a_malformed_hash_is_refused(make_note, bad):
    node = make_note("The key is under the pot.")
    with pytest.raises(Invalid, match="64-hex"):
        root(node.pk, adopting_words="yes", expected_body_hash=bad, owner=OWNER)


def test_root_of_a_decayed_node_is_refused(make_note):
    node = make_note("Old thought.")
    with transaction.atomic():
        Node.objects.filter(pk=node.pk).update(decayed_at=timezone.now())
        audit.record("decayed", node=node, actor="sleep", reason="age_no_access")
    with pytest.raises(Conflict, match="decayed"):
        root_as_owner(node)


def test_root_of_a_sealed_node_is_refused(make_note):
    node = make_note("Private.")
    seal(node.pk, owner=OWNER)
    with pytest.raises(Conflict, match="sealed"):
        root_as_owner(node)


def test_root_of_a_rejected_node_is_refused(make_note):
    node = make_note("False.")
    reject(node.pk, owner=OWNER, reason="false")
    with pytest.raises(Conflict, match="rejected"):
        root_as_owner(node)


def test_root_of_a_superseded_node_is_refused(make_note):
    node = make_note("Version one.")
    root_as_owner(node)
    new_hash = preview_supersede("Version two.")["body_hash"]
    supersede(
        node.pk,
        new_body="Version two.",
        adopting_words="v2",
        expected_body_hash=new_hash,
        owner=OWNER,
    )
    with pytest.raises(Conflict, match="superseded"):
        root_as_owner(node)


def test_root_of_ground_is_refused(make_note):
    node = make_note("Already true.")
    root_as_owner(node)
    with pytest.raises(Conflict, match="already ground"):
        root_as_owner(node)
    assert Event.objects.filter(node=node, kind="rooted").count() == 1


@pytest.mark.parametrize(
    "words", ["Ja, das stimmt.", "はい、その通りです。", "نعم، هذا صحيح", "Да ✅", "👍"]
)
def test_non_english_adopting_words_are_accepted(make_note, words):
    node = make_note("The key is under the pot.")
    assert root_as_owner(node, words).detail["adopting_words"] == words
    assert trust_of(node.pk) == Trust.GROUND


# --- supersede, seal, unseal refusals ------------------------------------------------------


@pytest.mark.parametrize("state", ["unreviewed", "proposed", "rejected", "sealed"])
def test_supersede_of_a_non_ground_node_is_refused(make_note, counts, state):
    node = make_note("Not ground.")
    if state == "proposed":
        propose(node.pk, actor="agent:a")
    elif state == "rejected":
        reject(node.pk, owner=OWNER, reason="no")
    elif state == "sealed":
        seal(node.pk, owner=OWNER)
    before = counts()
    with pytest.raises(Conflict, match="only ground can be superseded"):
        supersede(
            node.pk,
            new_body="Replacement.",
            adopting_words="y",
            expected_body_hash=preview_supersede("Replacement.")["body_hash"],
            owner=OWNER,
        )
    assert counts() == before


def test_supersede_of_a_superseded_node_is_refused(make_note):
    node = make_note("Version one.")
    root_as_owner(node)
    supersede_as_owner(node, "Version two.")
    with pytest.raises(Conflict, match="only ground"):
        supersede_as_owner(node, "Version three.")


def test_a_double_seal_is_refused(make_note):
    node = make_note("Private.")
    seal(node.pk, owner=OWNER)
    with pytest.raises(Conflict, match="already sealed"):
        seal(node.pk, owner=OWNER)
    assert Event.objects.filter(node=node, kind="sealed").count() == 1


def test_a_stray_unseal_is_refused(make_note):
    node = make_note("Never sealed.")
    with pytest.raises(Conflict, match="not sealed"):
        unseal(node.pk, owner=OWNER)
    seal(node.pk, owner=OWNER)
    unseal(node.pk, owner=OWNER)
    with pytest.raises(Conflict, match="not sealed"):
        unseal(node.pk, owner=OWNER)


# --- the scroll ----------------------------------------------------------------------------


@pytest.fixture
def long_scroll(db, tmp_path, settings):
    settings.GROVE_SCROLL_DIR = tmp_path
    for i in range(10):
        commit_turn(conversation="long", user=f"q{i} " + "w" * 1000, assistant="a")
    size = (tmp_path / "long.jsonl").stat().st_size
    assert size > 8192
    return size


def test_a_whole_scroll_read_is_refused(long_scroll):
    with pytest.raises(TooLarge):
        read_scroll("long")
    with pytest.raises(TooLarge):
        read_slice("long", offset=0, length=long_scroll)


def test_an_oversized_slice_or_tail_is_refused(long_scroll):
    with pytest.raises(TooLarge):
        read_slice("long", offset=100, length=8193)
    with pytest.raises(TooLarge):
        read_tail("long", max_bytes=8193)


def test_adjacent_slices_cannot_rebuild_the_scroll(long_scroll):
    ranges = [(start, 4096) for start in range(0, long_scroll, 4096)]
    with pytest.raises(TooLarge, match="together cover"):
        read_slices("long", ranges)


# --- two processes racing on the real SQLite file -----------------------------------------

_ROOT_CHILD = (
    CHILD_PRELUDE
    + """
from memory.errors import GroveError
from review.ceremony import root
try:
    root(int(sys.argv[2]), adopting_words=sys.argv[3], expected_body_hash=sys.argv[4],
         owner="owner")
    print("won")
except GroveError as exc:
    print("lost:" + exc.code)
"""
)

_SUPERSEDE_CHILD = (
    CHILD_PRELUDE
    + """
from memory.errors import GroveError
from review.ceremony import preview_supersede, supersede
text = sys.argv[3]
try:
    supersede(int(sys.argv[2]), new_body=text, adopting_words="mine",
              expected_body_hash=preview_supersede(text)["body_hash"], owner="owner")
    print("won")
except GroveError as exc:
    print("lost:" + exc.code)
"""
)


def _real_note(body: str) -> Node:
    seed = write_node(body="Seed.", kind="import", jurisdiction="wild", signature="i", source="s")
    return write_node(
        body=body,
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": seed.node.pk}],
    ).node


def test_two_processes_racing_root_exactly_one_wins(real_db, tmp_path):
    node = _real_note("The key is under the pot.")
    args = [[str(node.pk), words, node.body_hash] for words in ("first", "second")]
    outcomes = run_together(_ROOT_CHILD, args, db=real_db, tmp_path=tmp_path)
    assert sorted(outcomes) == ["lost:is_ground", "won"]
    assert Event.objects.filter(node=node, kind="rooted").count() == 1


def test_two_processes_racing_supersede_exactly_one_wins(real_db, tmp_path):
    node = _real_note("The key is under the pot.")
    root_as_owner(node)
    args = [[str(node.pk), "The key is in the shed."], [str(node.pk), "The key is lost."]]
    outcomes = run_together(_SUPERSEDE_CHILD, args, db=real_db, tmp_path=tmp_path)
    assert sorted(outcomes) == ["lost:not_ground", "won"]
    assert Event.objects.filter(node=node, kind="superseded").count() == 1
    assert Event.objects.filter(kind="rooted").count() == 2  # the old root and one new one
    assert Node.objects.filter(kind="note").count() == 2  # the loser wrote no node


_WRITE_CHILD = (
    CHILD_PRELUDE
    + """
from memory.write import write_node
result = write_node(body=sys.argv[2], kind="note", jurisdiction="home", signature="owner",
                    origins=[{"id": int(sys.argv[3])}])
print(result.node.pk)
"""
)


def test_two_processes_writing_the_same_words_make_one_node(real_db, tmp_path):
    """The duplicate lookup and the insert hold together under the write lock (BEGIN IMMEDIATE
    on SQLite, the advisory lock on PostgreSQL): the second writer finds the first's node."""
    seed = write_node(body="Seed.", kind="import", jurisdiction="wild", signature="i", source="s")
    args = [["The spare key is in the shed.", str(seed.node.pk)]] * 2
    first, second = run_together(_WRITE_CHILD, args, db=real_db, tmp_path=tmp_path)
    assert first == second
    assert Node.objects.filter(kind="note").count() == 1


@pytest.mark.postgres_only
def test_no_session_setting_lifts_the_truncate_guard_outside_a_test_database(real_db):
    import contextlib

    from django.db import DatabaseError

    from tests._helpers.realdb import production_named_pg_database

    with contextlib.contextmanager(production_named_pg_database)(real_db) as name:
        assert not name.startswith("test_")
        with (
            pytest.raises(DatabaseError, match="memory_event_no_truncate"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute("SET LOCAL grove.allow_flush = 'on'")
            cursor.execute("TRUNCATE memory_event CASCADE")
