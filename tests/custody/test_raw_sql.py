"""Custody against raw SQL: every statement form, every integrity check, the hash chain."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, transaction

from memory import audit
from memory.custody.chain_verify import verify, verify_from_checkpoint
from memory.custody.integrity import run_checks
from memory.models import ChainCheckpoint, Edge, Event, Node
from memory.scroll import commit_turn, scroll_dir
from review.ceremony import reject
from tests._helpers.acts import root_as_owner
from tests._helpers.vendor import drop_trigger, on_postgres, raw, table_columns


def failing(name: str, **kwargs) -> list[str]:
    (result,) = run_checks([name], **kwargs)
    return result.violations


def columns(table: str) -> list[str]:
    return table_columns(table)


def rewrite(form: str, table: str, row_id: int, column: str, value: str) -> str:
    """SQL that writes row `row_id` of `table` again with `column` = `value`, by `form`."""
    cols = columns(table)
    picked = ", ".join(value if c == column else c for c in cols)
    select = f"SELECT {picked} FROM {table} WHERE id = {row_id}"
    verb = {"replace": "REPLACE", "or_replace": "INSERT OR REPLACE", "insert": "INSERT"}
    if form == "upsert":
        return (
            f"INSERT INTO {table} ({', '.join(cols)}) {select} "
            f"AND {'TRUE' if on_postgres() else '1'} "
            f"ON CONFLICT(id) DO UPDATE SET {column} = {value}"
        )
    return f"{verb[form]} INTO {table} ({', '.join(cols)}) {select}"


# REPLACE is SQLite's; PostgreSQL has the other two (and its own forms: schema/test_postgres.py).
_SQLITE = pytest.mark.sqlite_only
FORMS = [
    pytest.param("replace", marks=_SQLITE),
    pytest.param("or_replace", marks=_SQLITE),
    "upsert",
    "insert",
]


@pytest.fixture
def ground(make_note) -> Node:
    node = make_note("The well is 40 metres deep.")
    root_as_owner(node)
    return node


# --- triggers against every statement form ------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_no_statement_form_rewrites_a_ground_nodes_body(ground, form):
    with pytest.raises(DatabaseError):
        raw(rewrite(form, "memory_node", ground.pk, "body", "'The well is dry.'"))
    ground.refresh_from_db()
    assert ground.body == "The well is 40 metres deep."
    assert not failing("body_hash_mismatch")


@pytest.mark.parametrize("form", FORMS)
def test_no_statement_form_turns_a_rejection_into_a_keep(make_note, form):
    node = make_note("Wrong words.")
    event = reject(node.pk, owner="owner", reason="wrong")
    with pytest.raises(DatabaseError):
        raw(rewrite(form, "memory_event", event.pk, "kind", "'kept'"))
    assert Event.objects.get(pk=event.pk).kind == "rejected"


@pytest.mark.parametrize("form", FORMS)
def test_no_statement_form_changes_an_edges_kind(make_note, form):
    edge = Edge.objects.get(from_node=make_note("Edged."))
    with pytest.raises(DatabaseError):
        raw(rewrite(form, "memory_edge", edge.pk, "kind", "'cites'"))
    assert Edge.objects.get(pk=edge.pk).kind == "derived_from"


@pytest.mark.sqlite_only  # REPLACE INTO; PostgreSQL's ON CONFLICT twin: schema/test_postgres.py
def test_replace_by_the_edge_triple_is_refused(make_note):
    edge = Edge.objects.get(from_node=make_note("Edged."))
    with pytest.raises(DatabaseError, match="memory_edge_no_replace"):
        raw(
            "REPLACE INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at,"
            " created_by) VALUES (%s, %s, %s, 9, '2001-01-01', 'forger')",
            (edge.from_node_id, edge.to_node_id, edge.kind),
        )
    assert Edge.objects.get(pk=edge.pk).created_by == edge.created_by


@pytest.mark.sqlite_only  # REPLACE INTO; on PostgreSQL a second root meets the same trigger
def test_replace_by_the_one_rooted_index_cannot_swap_the_adoption(ground):
    rooted = Event.objects.get(node=ground, kind="rooted")
    with pytest.raises(DatabaseError, match="second_verdict"):
        raw(
            "REPLACE INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail)"
            " VALUES ('2001-01-01', 'rooted', %s, 'forger', '', '{}', %s)",
            (ground.pk, f'{{"body_hash": "{ground.body_hash}", "adopting_words": "forged"}}'),
        )
    assert Event.objects.get(node=ground, kind="rooted").pk == rooted.pk


@pytest.mark.sqlite_only  # REPLACE INTO
def test_a_seal_cannot_be_erased_by_replace(make_note):
    from review.ceremony import seal

    node = make_note("Hidden words.")
    sealed = seal(node.pk, owner="owner")
    with pytest.raises(DatabaseError):
        raw(rewrite("replace", "memory_event", sealed.pk, "kind", "'kept'"))
    assert Event.objects.get(pk=sealed.pk).kind == "sealed"


# --- integrity: each check made to fail on purpose ----------------------------------------


def test_integrity_names_a_body_that_no_longer_matches_its_hash(make_note):
    node = make_note("Original words.")
    drop_trigger("memory_node_immutable")  # rolled back with the test
    raw("UPDATE memory_node SET body = 'Forged words.' WHERE id = %s", (node.pk,))
    assert failing("body_hash_mismatch") == [
        f"node {node.pk}: sha256 of the body is not its body_hash"
    ]


def test_integrity_names_a_root_whose_words_were_swapped_with_their_hash(ground):
    import hashlib

    forged = "The well is dry."
    drop_trigger("memory_node_immutable")
    raw(
        "UPDATE memory_node SET body = %s, body_hash = %s WHERE id = %s",
        (forged, hashlib.sha256(forged.encode()).hexdigest(), ground.pk),
    )
    assert not failing("body_hash_mismatch")  # the row agrees with itself ...
    (violation,) = failing("verdicts_disagree_with_body")  # ... but not with its adoption
    assert f"node {ground.pk}'s body" in violation
    assert failing("nodes_disagree_with_arrival") == [
        f"node {ground.pk}: body_hash differ from its arrival"
    ]


def test_integrity_names_a_node_that_joined_no_chain(db):
    raw(
        "INSERT INTO memory_node (body, body_hash, content_key, jurisdiction, kind, domain,"
        " signature, source, metadata, created_at, scroll_path, scroll_hash, access_count,"
        " permanent) VALUES ('x', %s, %s, 'wild', 'import', 'personal', 'raw', 'a.md', '{}',"
        " '2026-01-01', '', '', 0, FALSE)",
        ("0" * 64, "0" * 64),
    )
    node = Node.objects.get()
    assert f"node {node.pk} has no arrival event: it joined no chain" in failing(
        "nodes_disagree_with_arrival"
    )


def test_integrity_runs_scroll_verification(db, tmp_path, settings):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    commit_turn(conversation="porch", user="Rain?", assistant="Yes, at six.")
    assert not failing("scrolls_disagree_with_pairs")
    path = scroll_dir() / "porch.jsonl"
    path.write_text(path.read_text().replace("at six", "at ten"))
    violations = failing("scrolls_disagree_with_pairs")
    assert "scroll porch.jsonl: offset 0: seq 1 does not match its hash" in violations


def test_scroll_verification_never_follows_a_pointer_out_of_the_scrolls(db, tmp_path, settings):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    raw(
        "INSERT INTO memory_node (body, body_hash, content_key, jurisdiction, kind, domain,"
        " signature, source, metadata, created_at, scroll_path, scroll_offset, scroll_hash,"
        " access_count, permanent) VALUES ('x', %s, %s, 'home', 'pair', 'personal', 'raw', '',"
        " '{}', '2026-01-01', '../../etc/hostname', 0, %s, 0, FALSE)",
        ("0" * 64, "0" * 64, "0" * 64),
    )
    assert failing("scrolls_disagree_with_pairs") == [
        "scroll ../../etc/hostname: the pointer leaves the scroll directory"
    ]


# --- the hash chain -----------------------------------------------------------------------


def test_every_event_is_chained_and_the_chain_verifies(make_note):
    make_note("Chained.")
    report = verify()
    assert report.ok and report.count == Event.objects.count() >= 2


def test_an_event_edited_with_the_triggers_dropped_is_named(make_note):
    node = make_note("Kept once.")
    with transaction.atomic():
        kept = audit.record("kept", node=node, actor="owner")
    make_note("Later words.")
    drop_trigger("memory_event_no_update")
    raw("UPDATE memory_event SET actor = 'someone else' WHERE id = %s", (kept.pk,))
    report = verify()
    assert report.broken and report.broken.startswith(f"event {kept.pk} (kept)")


def test_a_deleted_event_breaks_the_next_link(make_note):
    node = make_note("Kept once.")
    with transaction.atomic():
        kept = audit.record("kept", node=node, actor="owner")
        after = audit.record("kept", node=node, actor="owner")
    drop_trigger("memory_event_no_delete")
    raw("DELETE FROM memory_event WHERE id = %s", (kept.pk,))
    assert verify().broken.startswith(f"event {after.pk} (kept)")


def test_integrity_names_both_an_edited_event_and_an_edited_body(make_note, capsys):
    node = make_note("The gate code is 1234.")
    old = Event.objects.filter(kind="arrived").order_by("id").first()
    make_note("Something later.")
    drop_trigger("memory_event_no_update")
    drop_trigger("memory_node_immutable")
    raw("UPDATE memory_event SET reason = 'forged' WHERE id = %s", (old.pk,))
    raw("UPDATE memory_node SET body = 'The gate code is 9999.' WHERE id = %s", (node.pk,))
    with pytest.raises(CommandError):
        call_command("integrity", "--full")
    out = capsys.readouterr().out
    assert f"event {old.pk} (arrived) does not match its content and link" in out
    assert f"node {node.pk}: sha256 of the body is not its body_hash" in out


def test_sleep_verifies_from_the_last_checkpoint(make_note):
    make_note("First.")
    first = verify_from_checkpoint()
    assert first.ok and ChainCheckpoint.objects.get().event_id == first.through_id
    make_note("Second.")
    second = verify_from_checkpoint()
    assert second.ok and second.first_id == first.through_id + 1
    assert ChainCheckpoint.objects.order_by("-id").first().event_id == Event.objects.latest("id").pk


def test_a_rewritten_checkpointed_event_is_refused_incrementally(make_note):
    make_note("First.")
    mark = verify_from_checkpoint()
    drop_trigger("memory_event_no_update")
    raw("UPDATE memory_event SET chain_hash = %s WHERE id = %s", ("f" * 64, mark.through_id))
    assert "no longer carries the hash" in verify_from_checkpoint().broken


def test_a_checkpoint_cannot_be_moved_or_erased(make_note):
    make_note("First.")
    verify_from_checkpoint()
    with pytest.raises(DatabaseError, match="append_only"):
        raw("UPDATE memory_chaincheckpoint SET event_id = 1")
    with pytest.raises(DatabaseError, match="append_only"):
        raw("DELETE FROM memory_chaincheckpoint")


def test_the_command_reports_how_far_the_record_is_verified(make_note, capsys):
    make_note("Verified.")
    call_command("integrity")
    last = Event.objects.latest("id").pk
    assert f"record verified through event {last}" in capsys.readouterr().out


# --- the chain under concurrent writers -----------------------------------------------------

_WRITER_CHILD = """
import os, sys, time, django
django.setup()
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.002)
from memory.write import write_node
for i in range(25):
    write_node(body=f"{sys.argv[2]} note {i}", kind="import", jurisdiction="wild",
               signature=sys.argv[2], source="race.md")
print("done")
"""


def test_two_processes_writing_at_once_leave_one_unbroken_chain(real_db, tmp_path):
    # Each reads the tail under the write lock it took first; on PostgreSQL, with that lock
    # made a no-op, two events link to the same tail and verification names the second.
    from tests._helpers.realdb import run_together

    outcomes = run_together(_WRITER_CHILD, [["a"], ["b"]], db=real_db, tmp_path=tmp_path)
    assert outcomes == ["done", "done"]
    report = verify()
    assert report.ok, report.broken
    assert report.count == Event.objects.filter(kind="arrived").count() == 50


def test_the_migration_chains_existing_rows_and_gives_each_node_its_arrival(real_db):
    import hashlib

    call_command("migrate", "memory", "0003", verbosity=0)
    body = "Old words with a zero\u200bwidth space."
    digest = hashlib.sha256(body.encode()).hexdigest()
    raw(
        "INSERT INTO memory_node (body, body_hash, content_key, jurisdiction, kind, domain,"
        " signature, source, metadata, created_at, scroll_path, scroll_hash, access_count,"
        " permanent) VALUES (%s, %s, %s, 'wild', 'import', 'personal', 'imp', 'a.md', '{}',"
        " '2026-01-01', '', '', 0, FALSE)",
        (body, digest, digest),
    )
    raw(
        "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail)"
        " VALUES ('2026-01-02', 'kept', 1, 'owner', '', '{}', '{}')"
    )
    call_command("migrate", verbosity=0)
    from memory.write import content_key_of

    node = Node.objects.get()
    assert node.content_key == content_key_of(body) != digest
    assert list(Event.objects.order_by("id").values_list("kind", flat=True)) == ["kept", "arrived"]
    report = verify()
    assert report.ok and report.count == 2
    assert all(run.ok for run in run_checks(["nodes_disagree_with_arrival", "hash_chain"]))


def test_a_rewrite_with_every_hash_recomputed_still_disagrees_with_the_anchor(make_note):
    from memory.chain import GENESIS, digest_of_row, event_rows

    make_note("Anchored words.")
    mark = verify_from_checkpoint()
    assert not failing("chain_anchors")
    drop_trigger("memory_event_no_update")
    first = Event.objects.order_by("id").first().pk  # 1 on SQLite; sequences run on in PostgreSQL
    raw("UPDATE memory_event SET actor = 'forger' WHERE id = %s", (first,))
    prev = GENESIS
    for row in list(event_rows(0)):  # the forger recomputes the whole chain
        prev = digest_of_row(row, prev)
        raw("UPDATE memory_event SET chain_hash = %s WHERE id = %s", (prev, row[0]))
    assert verify().ok  # the chain itself holds again ...
    (violation,) = failing("chain_anchors")  # ... but not against the anchor outside the file
    assert violation.startswith(f"event {mark.through_id} does not carry the hash anchored")


def test_an_event_time_edited_below_the_second_breaks_the_chain(make_note):
    from django.db import connection

    make_note("Chained at full precision.")
    event = Event.objects.order_by("id").first()
    # The same second, one microsecond off: what a hash over whole seconds would not see.
    edited = event.at.replace(microsecond=(event.at.microsecond + 1) % 1_000_000)
    drop_trigger("memory_event_no_update")
    at = connection.ops.adapt_datetimefield_value(edited)
    raw("UPDATE memory_event SET at = %s WHERE id = %s", (at, event.pk))
    assert verify().broken.startswith(f"event {event.pk} ({event.kind}) does not match")


@pytest.mark.parametrize("line", ["not json at all", '{"chain_hash": "ab"}', "[1, 2]", ""])
def test_a_malformed_line_in_the_anchor_file_is_reported_not_skipped(make_note, chain_anchor, line):
    make_note("Anchored words.")
    verify_from_checkpoint()
    assert not failing("chain_anchors")
    with chain_anchor.open("a") as handle:
        handle.write(line + "\n")
    assert failing("chain_anchors") == [
        "anchor line 2 is not a checkpoint: the anchor file was edited"
    ]
