"""The vector matrix (memory/vectors/matrix.py): the cached rows recall scans, read from the vector
table past the last row it holds, grown by reservations, damaged rows skipped and named, and
the exact scan over it. Its float16 first pass: test_matrix_coarse.py."""

from __future__ import annotations

import logging
from typing import ClassVar

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from threadpoolctl import ThreadpoolController

import memory.vectors.matrix as matrix_module
from memory.models import Node, Vector
from memory.vectors.embed import embed_missing, get_embedder, to_blob
from memory.vectors.matrix import (
    _reserve,
    exact_candidates,
    vector_matrix,
)
from memory.visibility import Visibility
from tests._helpers.nodes import store
from tests._helpers.vectors import embed_one, matrix_of


def _damaged(node: Node) -> Vector:
    """A vector row for `node` whose blob is 4 bytes short of its dim."""
    embedder = get_embedder()
    data = b"\0" * (embedder.dim * 4 - 4)
    return Vector.objects.create(node=node, model=embedder.name, dim=embedder.dim, data=data)


def test_the_vector_matrix_names_only_the_damaged_row_it_skips(make_note, caplog, monkeypatch):
    monkeypatch.setattr(matrix_module, "_matrices", {})  # built afresh from this test's rows
    note = make_note("The heron stands in the reeds.")
    broken = make_note("A broken vector belongs to this heron note.")
    vector = _damaged(broken)  # the first vector row: its id is not its node's
    embed_missing()
    dim = get_embedder().dim
    with caplog.at_level(logging.WARNING, logger="grove.recall"):
        matrix = vector_matrix()
    rows = matrix.ids[: matrix.n].tolist()
    assert note.pk in rows and broken.pk not in rows and vector.pk != broken.pk
    assert [r.getMessage() for r in caplog.records if r.name == "grove.recall"] == [
        f"vector {vector.pk} (node {broken.pk}) has {dim * 4 - 4} bytes for dim {dim}: skipped"
    ]


def test_new_rows_that_are_all_damaged_leave_the_cached_matrix_as_it_was(make_note, monkeypatch):
    monkeypatch.setattr(matrix_module, "_matrices", {})
    make_note("The heron stands in the reeds.")
    _damaged(make_note("Damaged from the start."))  # vector 1: the last good row's ids differ
    embed_missing()
    matrix = vector_matrix()
    rows = matrix.ids[: matrix.n].tolist()
    make_note("No vector yet: the damaged row's id is not its node's.")
    _damaged(make_note("A broken vector, the only new row."))
    assert vector_matrix() is matrix and matrix.ids[: matrix.n].tolist() == rows
    assert vector_matrix() is matrix and matrix.ids[: matrix.n].tolist() == rows


EVERYTHING = Visibility.of(domains=None, scope="both", as_of=None)


def test_a_full_matrix_is_not_grown_until_a_row_more_is_needed():
    matrix = matrix_of(np.ones((10, 8), dtype=np.float32))
    full, vectors = len(matrix.ids), matrix.vectors
    _reserve(matrix, full)
    assert len(matrix.ids) == full and matrix.vectors is vectors
    before = [a[:10].tolist() for a in (matrix.ids, matrix.domain_codes, matrix.wild)]
    created = matrix.created[:10].tolist()
    _reserve(matrix, full + 1)
    assert len(matrix.ids) == len(matrix.vectors) == int(full * 1.25) + 1024
    assert [a[:10].tolist() for a in (matrix.ids, matrix.domain_codes, matrix.wild)] == before
    assert matrix.created[:10].tolist() == created and matrix.vectors.dtype == np.float32
    assert matrix.vectors[:10].tolist() == vectors[:10].tolist()


class _Probe(np.ndarray):
    """The matrix's rows, noting the BLAS thread counts in force at each product with them."""

    threads: ClassVar[list[list[int]]] = []

    def __matmul__(self, other):
        blas = ThreadpoolController().select(user_api="blas").info()
        _Probe.threads.append([lib["num_threads"] for lib in blas])
        return np.asarray(self) @ other


def test_the_exact_scan_multiplies_on_one_blas_thread():
    matrix = matrix_of(np.random.default_rng(6).standard_normal((10, 8)).astype(np.float32))
    matrix.vectors = matrix.vectors.view(_Probe)
    _Probe.threads = []
    found = exact_candidates(matrix, matrix.vectors[3].view(np.ndarray), EVERYTHING, 1)
    assert found[0][0] == 4 and _Probe.threads and all(t == 1 for ts in _Probe.threads for t in ts)


def test_each_database_name_has_its_own_vector_matrix(make_note):
    embed_one(make_note("A heron stands by the reed."))
    first = vector_matrix()
    name = connection.settings_dict["NAME"]
    connection.settings_dict["NAME"] = "another-database.sqlite3"
    try:
        second = vector_matrix()
    finally:
        connection.settings_dict["NAME"] = name
        matrix_module._matrices.pop(("another-database.sqlite3", get_embedder().name), None)
    assert second is not first
    assert vector_matrix() is first


@pytest.mark.sqlite_only  # the plan is SQLite's; PostgreSQL's planner takes no hint
def test_the_matrix_reads_only_the_new_vectors_by_their_id_range(make_note):
    embed_one(make_note("A heron stands by the reed."))
    with CaptureQueriesContext(connection) as queries:
        assert vector_matrix().n == 1
    (read,) = [q["sql"] for q in queries.captured_queries if "FROM memory_vector v" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + read)
        plan = [row[3] for row in cursor.fetchall()]
    # Not the model's index (every vector of the model, then sorted): the rows past the last.
    assert plan == [
        "SEARCH v USING INTEGER PRIMARY KEY (rowid>?)",
        "SEARCH n USING INTEGER PRIMARY KEY (rowid=?)",
    ]


def test_the_matrix_above_a_floor_reserves_room_for_the_rows_above_it_only(make_note):
    note = make_note("A heron stands by the reed.")
    embedder = get_embedder()
    vector = embedder.embed([note.body])[0]
    Vector.objects.create(
        pk=5000, node=note, model=embedder.name, dim=embedder.dim, data=to_blob(vector)
    )
    matrix = vector_matrix(after_id=4999)
    assert matrix.n == 1 and matrix.ids[:1].tolist() == [note.pk]
    assert len(matrix.ids) == 1024  # the least first reservation: not room for 5000 + 4999 rows


def test_new_vectors_past_one_fetch_are_reserved_for_at_once(db):
    embedder = get_embedder()
    count = 5001  # past one fetchmany(5000)
    store(*[f"Note {i}." for i in range(1, count + 1)])
    blob = to_blob(embedder.embed(["Note."])[0])
    Vector.objects.bulk_create(
        Vector(node_id=i, model=embedder.name, dim=embedder.dim, data=blob)
        for i in range(1, count + 1)
    )
    matrix = vector_matrix()
    assert matrix.n == count
    # One allocation for every id up to the newest (ids restart after a rollback on SQLite, not
    # on PostgreSQL), not grown by a quarter and 1024 past the first fetch.
    assert len(matrix.ids) == Vector.objects.order_by("-id").values_list("id", flat=True)[0]


def test_with_no_vectors_the_matrix_reserves_nothing(db):
    matrix = vector_matrix()
    assert matrix.n == 0 and len(matrix.ids) == 0


def test_a_matrix_with_nothing_new_is_checked_by_two_lookups_and_not_read_again(make_note):
    embed_one(make_note("A heron stands by the reed."))
    first = vector_matrix()
    with CaptureQueriesContext(connection) as queries:
        assert vector_matrix() is first
    # Its last row still there, and the newest id: no read of the rows past it.
    assert len(queries.captured_queries) == 2
