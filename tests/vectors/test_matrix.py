"""The vector matrix (memory/vectors/matrix.py): the cached rows recall scans, read from the vector
table past the last row it holds, grown by reservations, damaged rows skipped and named, and
the exact scan over it. Its float16 first pass: test_matrix_coarse.py."""

from __future__ import annotations

import logging

import memory.vectors.matrix as matrix_module
from memory.models import Node, Vector
from memory.vectors.embed import embed_missing, get_embedder
from memory.vectors.matrix import vector_matrix


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
