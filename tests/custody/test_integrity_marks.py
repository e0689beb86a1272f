"""Above marks (sleep's incremental run, memory/custody/since.py) the flag checks read only the
nodes with an event above the event mark: an old disagreement waits for the weekly full run,
and a node that changed since is read whatever its id."""

from __future__ import annotations

import json

from django.db import connection, transaction
from django.utils import timezone

from memory import audit
from memory.custody.integrity import CHECKS, run_checks
from memory.custody.since import current_marks
from memory.vectors.embed import get_embedder
from tests._helpers.acts import root_as_owner
from tests._helpers.vendor import drop_trigger, raw


def now() -> str:
    return connection.ops.adapt_datetimefield_value(timezone.now())


def an_event(node_id: int) -> None:
    """An event on the node that changes none of its flags (the owner's keep)."""
    with transaction.atomic():
        audit.record("kept", node=node_id, actor="owner", reason="")


def test_a_permanent_decayed_node_is_read_above_the_marks_once_it_has_a_new_event(make_note):
    node = make_note("Both at once, before the mark.")
    drop_trigger("memory_node_permanent_never_decays")  # rolled back with the test
    raw(
        "UPDATE memory_node SET permanent = TRUE, permanent_at = %s, decayed_at = %s WHERE id = %s",
        (now(), now(), node.pk),
    )
    marks = current_marks()
    assert CHECKS["permanent_but_decayed"]() == [f"node {node.pk} is permanent but decayed"]
    assert CHECKS["permanent_but_decayed"](marks=marks) == []
    an_event(node.pk)
    assert CHECKS["permanent_but_decayed"](marks=marks) == [
        f"node {node.pk} is permanent but decayed"
    ]


def test_a_lifecycle_event_after_the_marks_is_judged_on_an_old_node(make_note):
    before = make_note("Said decayed before the mark, still live.")
    after = make_note("Said decayed after the mark, still live.")
    with transaction.atomic():
        audit.record("decayed", node=before.pk, actor="sleep", reason="age_no_access")
    marks = current_marks()
    assert marks["node"] >= after.pk  # both nodes are old: only their events can bring them in
    with transaction.atomic():
        audit.record("decayed", node=after.pk, actor="sleep", reason="age_no_access")
    check = CHECKS["lifecycle_flag_disagrees_with_latest_event"]
    assert check(marks=marks) == [
        f"node {after.pk} is live but its latest lifecycle event is decayed"
    ]
    assert len(check()) == 2


def test_a_decayed_ground_node_is_read_above_the_marks_once_it_has_a_new_event(make_note):
    node = make_note("Held, then flagged decayed behind the ceremony's back.")
    root_as_owner(node)
    raw("UPDATE memory_node SET decayed_at = %s WHERE id = %s", (now(), node.pk))
    marks = current_marks()
    assert CHECKS["ground_or_proposed_decayed"]() == [f"node {node.pk} is ground but decayed"]
    assert CHECKS["ground_or_proposed_decayed"](marks=marks) == []
    an_event(node.pk)
    assert CHECKS["ground_or_proposed_decayed"](marks=marks) == [
        f"node {node.pk} is ground but decayed"
    ]


def test_a_node_left_without_a_vector_is_read_above_the_marks_once_it_has_a_new_event(
    make_note,
):
    node = make_note("Embedded by nobody.")
    steps = {"embed": {"complete": True, "through_id": node.pk, "model": get_embedder().name}}
    raw(
        """INSERT INTO memory_sleeprun (requested_at, started_at, finished_at, status,
           requested_by, dry_run, only_step, current_step, steps, error)
           VALUES (%s, %s, %s, 'done', 'test', FALSE, '', '', %s, '')""",
        (now(), now(), now(), json.dumps(steps)),
    )
    marks = current_marks()
    check = CHECKS["live_nodes_without_vectors"]
    assert f"node {node.pk} " in " ".join(check())
    assert check(marks=marks) == []
    an_event(node.pk)
    assert check(marks=marks) == [
        f"node {node.pk} is live without a {get_embedder().name} vector after sleep run"
    ]


def test_run_checks_hands_its_marks_to_the_flag_checks(make_note):
    node = make_note("Permanent by fiat, before the mark.")
    drop_trigger("memory_node_permanent_one_way")  # rolled back with the test
    raw(
        "UPDATE memory_node SET permanent = TRUE, permanent_at = %s WHERE id = %s", (now(), node.pk)
    )
    (full,) = run_checks(["permanent_without_event"])
    (scoped,) = run_checks(["permanent_without_event"], since=current_marks())
    assert not full.ok and scoped.ok
