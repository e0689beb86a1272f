"""The vector matrix (memory/vectors/matrix.py): the cached rows recall scans, read from the vector
table past the last row it holds, grown by reservations, damaged rows skipped and named, and
the exact scan over it. Its float16 first pass: test_matrix_coarse.py."""

from __future__ import annotations

import logging

import numpy as np
from threadpoolctl import ThreadpoolController

import memory.vectors.matrix as matrix_module
from memory.models import Node, Vector
from memory.vectors.embed import embed_missing, get_embedder
from memory.vectors.matrix import (
    _reserve,
    exact_candidates,
    vector_matrix,
)
from memory.visibility import Visibility
from tests._helpers.vectors import matrix_of


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

    threads: list[list[int]] = []

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
