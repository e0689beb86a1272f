"""Sleep's incremental integrity (memory/custody/since.py): each sleep checks the rows added
since the last clean run, everything once a week and on demand."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
import time_machine
from django.db import connection, transaction
from django.utils import timezone

from memory import audit
from memory.custody.integrity import CHECKS, SCOPED, run_checks
from memory.custody.since import current_marks, last_verified
from memory.sleep.run import run_sleep
from tests._helpers.vendor import drop_trigger


def sql(statement: str, params: list | tuple = ()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def vector_id(node_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT MAX(id) FROM memory_vector WHERE node_id = %s", [node_id])
        return cursor.fetchone()[0]


def poison(vector: int) -> None:
    """Overwrite a stored vector with NaNs (what vectors_nan_or_zero must catch)."""
    sql(
        "UPDATE memory_vector SET data = %s WHERE id = %s",
        [np.full(256, np.nan, dtype="<f4").tobytes(), vector],
    )


def integrity(run) -> dict:
    return run.steps["integrity"]


def test_the_first_sleep_checks_everything_and_the_next_only_what_is_new(make_note):
    make_note("A first note about the garden shed.")
    first = integrity(run_sleep(requested_by="test"))
    assert first["full"] is True and first["failed"] == {}
    assert first["verified"] == current_marks()
    make_note("A second note about the compost heap.")
    second = integrity(run_sleep(requested_by="test"))
    assert second["full"] is False
    assert second["since"] == first["verified"]
    assert second["verified"]["node"] > first["verified"]["node"]


def test_a_broken_new_row_is_found_and_an_old_one_waits_for_the_weekly_run(make_note):
    old = make_note("An old note, checked by the first sleep.")
    run_sleep(requested_by="test")
    new = make_note("A new note, embedded by the second sleep.")
    poison(vector_id(old.pk))
    second = integrity(run_sleep(requested_by="test"))
    # The old vector is below the verified mark: the incremental run does not read it ...
    assert second["full"] is False and "vectors_nan_or_zero" not in second["failed"]
    # ... the on-demand run (manage.py integrity) does.
    assert not {r.name: r for r in run_checks()}["vectors_nan_or_zero"].ok
    poison(vector_id(new.pk))
    make_note("A third note, so the next sleep has new rows.")
    third = integrity(run_sleep(requested_by="test"))
    assert third["full"] is False
    assert "vectors_nan_or_zero" not in third["failed"]  # new's vector is below second's mark
    # Once a week everything is read again (the store clock, eight days on).
    with time_machine.travel(timezone.now() + timedelta(days=8)):
        weekly = integrity(run_sleep(requested_by="test"))
    assert weekly["full"] is True
    found = " ".join(weekly["failed"]["vectors_nan_or_zero"])
    assert f"(node {old.pk})" in found and f"(node {new.pk})" in found
    assert "verified" not in weekly


def test_a_run_with_violations_leaves_the_verified_point_where_it_was(make_note):
    make_note("Checked clean.")
    clean = integrity(run_sleep(requested_by="test"))["verified"]
    note = make_note("Embedded, then broken before the next check.")
    run_sleep(requested_by="test", only_step="embed")
    poison(vector_id(note.pk))
    failing = integrity(run_sleep(requested_by="test", only_step="integrity"))
    assert failing["full"] is False and "vectors_nan_or_zero" in failing["failed"]
    assert "verified" not in failing and last_verified() == clean
    again = integrity(run_sleep(requested_by="test", only_step="integrity"))
    assert again["since"] == clean and "vectors_nan_or_zero" in again["failed"]


def test_each_scoped_check_reads_only_rows_above_its_mark(make_note):
    a, b = make_note("A."), make_note("B.")
    insert = """INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at,
                created_by) VALUES (%s, %s, 'similar', 0.9, %s, 'test')"""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    sql(insert, [b.pk, a.pk, now])
    sql(insert, [a.pk, b.pk, now])
    drop_trigger("memory_node_immutable")  # as an attacker would; rolled back with the test
    sql("UPDATE memory_node SET body_hash = %s WHERE id = %s", ["0" * 64, b.pk])
    marks = current_marks()
    cases = {"similar_edges_duplicated": "edge", "body_hash_mismatch": "node"}
    for name, mark in cases.items():
        assert SCOPED[name] == mark
        assert CHECKS[name](), name  # the broken row is there ...
        assert CHECKS[name](after=marks[mark] - 1), name  # ... above a mark just below it ...
        assert CHECKS[name](after=marks[mark]) == [], name  # ... and not read above its id


@pytest.mark.parametrize("name", sorted(SCOPED))
def test_every_scoped_check_takes_a_mark_and_holds_on_a_clean_graph(make_note, name):
    make_note("A clean note.")
    run_sleep(requested_by="test")
    if SCOPED[name] == "marks":
        assert CHECKS[name](marks=current_marks()) == []
    else:
        assert CHECKS[name](after=0) == [] and CHECKS[name](after=10**9) == []


def test_a_new_vector_unlike_its_models_verified_rows_is_found_above_the_mark(make_note):
    """Above a mark the modal dim is the verified rows' (their last one), not the new rows'."""
    a, b, c = make_note("A."), make_note("B."), make_note("C.")
    put = """INSERT INTO memory_vector (node_id, model, dim, data, created_at)
             VALUES (%s, 'm', %s, %s, %s)"""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    sql(put, [a.pk, 4, np.ones(4, dtype="<f4").tobytes(), now])
    mark = current_marks()["vector"]
    for node in (b, c):  # two new rows of another dim outnumber the one verified row
        sql(put, [node.pk, 3, np.ones(3, dtype="<f4").tobytes(), now])
    found = CHECKS["vectors_of_wrong_dimension"](after=mark)
    assert len(found) == 2 and all("has dim 3; the model's rows have 4" in f for f in found)
    assert CHECKS["vectors_of_wrong_dimension"](after=mark + 2) == []


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's query planner")
def test_the_vector_check_above_a_mark_reads_only_the_id_range(make_note):
    """Through the (model, node) index, finding the last verified row sorted every vector of the
    model (2 s at 1M): each of the check's reads must search the id range instead."""
    from django.test.utils import CaptureQueriesContext

    put = """INSERT INTO memory_vector (node_id, model, dim, data, created_at)
             VALUES (%s, 'm', 4, %s, %s)"""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    for i in range(3):
        sql(put, [make_note(f"Note {i}.").pk, np.ones(4, dtype="<f4").tobytes(), now])
    mark = current_marks()["vector"] - 1
    with CaptureQueriesContext(connection) as queries:
        assert CHECKS["vectors_of_wrong_dimension"](after=mark) == []
    plans = []
    with connection.cursor() as cursor:
        for query in queries.captured_queries:
            cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
            plans += [
                row[3]
                for row in cursor.fetchall()
                if "memory_vector" in row[3]
                or row[3].startswith(("SEARCH o", "SEARCH v", "SCAN o", "SCAN v"))
            ]
    assert len(plans) == 4 and all("INTEGER PRIMARY KEY (rowid" in plan for plan in plans), plans


def decay_raw(node_id: int, reason: str) -> None:
    """Flag a node decayed with its event, as a faulty sweep would (raw SQL + the writer),
    recording the threshold a sweep records."""
    with transaction.atomic():
        sql(
            "UPDATE memory_node SET decayed_at = %s WHERE id = %s",
            [connection.ops.adapt_datetimefield_value(timezone.now()), node_id],
        )
        detail = {"min_age_days": 14}
        audit.record("decayed", node=node_id, actor="sleep", reason=reason, detail=detail)


def test_the_decay_checks_above_marks_see_what_was_decayed_after_them(make_note, root_note):
    child = make_note("Derived from the notebook, still live.")
    young = make_note("Written today.")
    decay_raw(young.pk, "unreachable")  # a young root decayed: before the mark
    marks = current_marks()
    assert CHECKS["root_decayed"]() and CHECKS["root_decayed"](marks=marks) == []
    assert CHECKS["live_node_holds_decayed_node"](marks=marks) == []
    decay_raw(root_note.pk, "unreachable")  # held by child, and young: after the mark
    held = f"live node {child.pk} holds decayed node {root_note.pk} (derived_from)"
    assert CHECKS["live_node_holds_decayed_node"](marks=marks) == [held]
    found = CHECKS["root_decayed"](marks=marks)
    assert found == [f"root node {root_note.pk} (young) was decayed as unreachable"]
    # A new holding edge between nodes with no new event is seen through the edge mark.
    later = current_marks()
    assert CHECKS["live_node_holds_decayed_node"](marks=later) == []
    # (no origin: a new note may not derive from the decayed root note)
    other = make_note(
        "Another live note.", origins=[], kind="import", jurisdiction="wild", source="x.md"
    )
    edge_marks = {**current_marks(), "edge": later["edge"]}
    sql(
        """INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at,
           created_by) VALUES (%s, %s, 'cites', 1.0, %s, 'test')""",
        [other.pk, root_note.pk, connection.ops.adapt_datetimefield_value(timezone.now())],
    )
    assert f"live node {other.pk} holds decayed node {root_note.pk} (cites)" in " ".join(
        CHECKS["live_node_holds_decayed_node"](marks=edge_marks)
    )


def test_the_flag_checks_above_marks_read_only_nodes_with_a_new_event(make_note):
    old, new = make_note("Flagged before the mark."), make_note("Flagged after it.")
    drop_trigger("memory_node_permanent_one_way")  # as an attacker would; rolled back
    sql(
        "UPDATE memory_node SET permanent = TRUE, permanent_at = created_at WHERE id = %s", [old.pk]
    )
    marks = current_marks()
    assert CHECKS["permanent_without_event"]()  # the full check sees the old flag ...
    assert CHECKS["permanent_without_event"](marks=marks) == []  # ... the marks do not
    sql(
        "UPDATE memory_node SET permanent = TRUE, permanent_at = created_at WHERE id = %s", [new.pk]
    )
    audit.record("kept", node=new.pk, actor="owner", reason="")  # an event after the mark
    found = CHECKS["permanent_without_event"](marks=marks)
    assert found == [f"node {new.pk} is permanent but has no promoted_permanent event"]


def test_on_demand_everything_is_checked_the_chain_from_its_first_event(make_note):
    from memory.custody.since import sleep_checks
    from memory.models import Event

    make_note("A note the first sleep verifies.")
    run_sleep(requested_by="test")
    assert last_verified() is not None  # a verified point the on-demand run must ignore
    first = Event.objects.order_by("id").first()
    drop_trigger("memory_event_no_update")
    sql("UPDATE memory_event SET reason = 'forged' WHERE id = %s", [first.pk])
    # The nightly run reads the chain from its checkpoint, past the edit: it waits for the week.
    nightly, info = sleep_checks()
    assert info["chain_full"] is False and info["full"] is False and info["since"] is not None
    assert all(r.ok for r in nightly if r.name == "hash_chain")
    results, info = sleep_checks(full=True)
    assert {k: info[k] for k in ("full", "chain_full", "since")} == {
        "full": True,
        "chain_full": True,
        "since": None,
    }
    (chain,) = [r for r in results if r.name == "hash_chain"]
    assert not chain.ok and f"event {first.pk}" in chain.violations[0]
    assert "verified" not in info


@pytest.mark.django_db
def test_an_empty_table_is_marked_below_any_row_it_will_hold():
    from memory.models import Vector

    assert not Vector.objects.exists()
    assert current_marks()["vector"] == 0  # the first vector, id 1 or more, is above the mark
