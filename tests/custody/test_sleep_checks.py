from __future__ import annotations

import json

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from memory.custody.integrity import CHECKS
from memory.models import SleepRun
from memory.sleep.run import run_sleep
from memory.vectors.embed import get_embedder

SLEEP_CHECKS = [
    "vectors_of_wrong_dimension",
    "vectors_nan_or_zero",
    "vectors_of_missing_nodes",
    "live_nodes_without_vectors",
    "ground_or_proposed_decayed",
    "similar_edges_duplicated",
]


def sql(statement: str, params: list | tuple = ()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def now() -> str:
    return connection.ops.adapt_datetimefield_value(timezone.now())


def put_vector(node_id: int, data: bytes, *, dim: int, model: str = "m") -> None:
    sql(
        """INSERT INTO memory_vector (node_id, model, dim, data, created_at)
           VALUES (%s, %s, %s, %s, %s)""",
        [node_id, model, dim, data, now()],
    )


def ones(dim: int) -> bytes:
    return np.ones(dim, dtype="<f4").tobytes()


def test_a_slept_graph_reports_zero_on_every_sleep_check(make_note):
    for i in range(5):
        make_note(f"Clean note number {i} about the garden shed.")
    run_sleep(requested_by="test")
    assert {name: CHECKS[name]() for name in SLEEP_CHECKS} == {n: [] for n in SLEEP_CHECKS}


def test_it_reports_a_blob_that_does_not_match_its_dim(make_note):
    node = make_note("A note.")
    put_vector(node.pk, ones(2), dim=4)
    assert "8 bytes for dim 4" in CHECKS["vectors_of_wrong_dimension"]()[0]


def test_it_reports_a_dim_unlike_the_models_other_rows(make_note, root_note):
    a, b = make_note("A."), make_note("B.")
    put_vector(a.pk, ones(4), dim=4)
    put_vector(b.pk, ones(4), dim=4)
    put_vector(root_note.pk, ones(3), dim=3)
    assert CHECKS["vectors_of_wrong_dimension"]() == [
        f"vector {_vector_id(root_note.pk)} (node {root_note.pk}, m) has dim 3; "
        "the model's rows have 4"
    ]


def _vector_id(node_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM memory_vector WHERE node_id = %s", [node_id])
        return cursor.fetchone()[0]


@pytest.mark.parametrize(
    ("values", "what"),
    [([np.nan, 1.0], "NaN or infinite values"), ([0.0, 0.0], "zero norm")],
)
def test_it_reports_nan_and_zero_vectors(make_note, root_note, values, what):
    node = make_note("A.")
    put_vector(root_note.pk, ones(2), dim=2)
    put_vector(node.pk, np.array(values, dtype="<f4").tobytes(), dim=2)
    assert CHECKS["vectors_nan_or_zero"]() == [
        f"vector {_vector_id(node.pk)} (node {node.pk}) has {what}"
    ]


def test_it_reports_a_vector_of_a_missing_node(db):
    # Foreign keys are deferred to commit, and the test's transaction never commits.
    put_vector(987654, ones(2), dim=2)
    found = CHECKS["vectors_of_missing_nodes"]()
    # Gone again before teardown's foreign key check (vectors are rebuildable, not audited).
    sql("DELETE FROM memory_vector WHERE node_id = 987654")
    assert len(found) == 1 and found[0].endswith("belongs to missing node 987654")


def test_it_reports_a_live_node_a_finished_run_left_without_a_vector(make_note):
    node = make_note("Embedded by nobody.")
    assert CHECKS["live_nodes_without_vectors"]() == []  # no finished run yet: nothing owed
    steps = {"embed": {"complete": True, "through_id": node.pk, "model": get_embedder().name}}
    sql(
        """INSERT INTO memory_sleeprun (requested_at, started_at, finished_at, status,
           requested_by, dry_run, only_step, current_step, steps, error)
           VALUES (%s, %s, %s, 'done', 'test', FALSE, '', '', %s, '')""",
        [now(), now(), now(), json.dumps(steps)],
    )
    found = CHECKS["live_nodes_without_vectors"]()
    assert len(found) >= 1 and f"node {node.pk} " in found[-1]


def put_run(steps: dict) -> None:
    sql(
        """INSERT INTO memory_sleeprun (requested_at, started_at, finished_at, status,
           requested_by, dry_run, only_step, current_step, steps, error)
           VALUES (%s, %s, %s, 'done', 'test', FALSE, '', '', %s, '')""",
        [now(), now(), now(), json.dumps(steps)],
    )


def test_a_run_whose_embedding_did_not_finish_owes_no_vector(make_note):
    node = make_note("Embedded by nobody.")
    model = get_embedder().name
    put_run({"embed": {"complete": False, "through_id": node.pk, "model": model}})
    assert CHECKS["live_nodes_without_vectors"]() == []


def test_the_last_run_that_finished_its_embedding_is_the_one_judged(make_note):
    node = make_note("Embedded by nobody.")
    model = get_embedder().name
    put_run({"embed": {"complete": True, "through_id": node.pk, "model": model}})
    put_run({"embed": {"complete": False, "through_id": node.pk, "model": model}})  # later
    assert f"node {node.pk} " in " ".join(CHECKS["live_nodes_without_vectors"]())


@pytest.mark.parametrize("kind", ["rooted", "proposed"])
def test_it_reports_a_decayed_ground_or_proposed_node(make_note, kind):
    node = make_note("Held, then flagged behind the ceremony's back.")
    detail = json.dumps({"body_hash": node.body_hash, "adopting_words": "I hold this."})
    sql(
        """INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail)
           VALUES (%s, %s, %s, 'owner', '', '{}', %s)""",
        [now(), kind, node.pk, detail],
    )
    assert CHECKS["ground_or_proposed_decayed"]() == []
    sql("UPDATE memory_node SET decayed_at = %s WHERE id = %s", [now(), node.pk])
    expected = "ground" if kind == "rooted" else "proposed"
    assert CHECKS["ground_or_proposed_decayed"]() == [f"node {node.pk} is {expected} but decayed"]


def test_it_reports_a_similar_pair_linked_both_ways(make_note):
    a, b = make_note("A."), make_note("B.")
    insert = """INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at,
                created_by) VALUES (%s, %s, 'similar', 0.9, %s, 'test')"""
    sql(insert, [a.pk, b.pk, now()])
    assert CHECKS["similar_edges_duplicated"]() == []
    sql(insert, [b.pk, a.pk, now()])
    found = CHECKS["similar_edges_duplicated"]()
    assert len(found) == 1 and f"({a.pk} -> {b.pk})" in found[0]


def test_the_sleep_run_records_integrity_results(make_note):
    make_note("A note with words to embed.")
    run = run_sleep(requested_by="test")
    assert run.steps["integrity"]["failed"] == {}
    assert SleepRun.objects.get(pk=run.pk).status == "done"
