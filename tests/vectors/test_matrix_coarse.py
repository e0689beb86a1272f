"""The exact vector scan's float16 first pass (memory.recall._coarse_rows): the same rows in the
same order as the float32 scan of every row, with and without visibility filters, when scores
crowd the k-th place, and in whole recalls."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

import memory.vectors.matrix as matrix_module
from memory.recall import recall, vector_search
from memory.vectors.embed import embed_missing, get_embedder, normalise
from memory.vectors.matrix import Matrix, _coarse_index, _coarse_rows, exact_candidates
from memory.visibility import Visibility
from tests._helpers.vectors import START, matrix_of

EVERYTHING = Visibility.of(domains=None, scope="both", as_of=None)


def full_scan(monkeypatch, matrix: Matrix, q: np.ndarray, vis: Visibility, k: int) -> list:
    with monkeypatch.context() as patched:
        patched.setattr(matrix_module, "COARSE_ROWS", (0, 0))
        return exact_candidates(matrix, q, vis, k)


def assert_same(found: list, expected: list) -> None:
    assert [i for i, _ in found] == [i for i, _ in expected]
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-6)


def spy(monkeypatch) -> list:
    """What each call of _coarse_rows answered (None: the full scan)."""
    answers: list = []
    real = matrix_module._coarse_rows

    def record(*args, **kwargs):
        answers.append(real(*args, **kwargs))
        return answers[-1]

    monkeypatch.setattr(matrix_module, "_coarse_rows", record)
    return answers


def test_the_float16_pass_keeps_the_float32_top_k(monkeypatch):
    rng = np.random.default_rng(7)
    matrix = matrix_of(normalise(rng.standard_normal((6000, 64)).astype(np.float32)))
    queries = normalise(rng.standard_normal((30, 64)).astype(np.float32))
    expected = [full_scan(monkeypatch, matrix, q, EVERYTHING, 100) for q in queries]
    answers = spy(monkeypatch)
    for q, want in zip(queries, expected, strict=True):
        assert_same(exact_candidates(matrix, q, EVERYTHING, 100), want)
    # The first pass did the work: it kept a few hundred of the 6000 rows every time.
    assert all(a is not None and 100 <= len(a) < 1000 for a in answers)


@pytest.mark.parametrize(
    "vis",
    [
        Visibility.of(domains=["a"], scope="both", as_of=None),
        Visibility.of(domains=None, scope="wild", as_of=None),
        Visibility.of(domains=["b", "c"], scope="home", as_of=START + timedelta(hours=900)),
        Visibility.of(domains=["nowhere"], scope="both", as_of=None),
    ],
)
def test_the_float16_pass_filters_as_the_full_scan(monkeypatch, vis):
    rng = np.random.default_rng(11)
    matrix = matrix_of(normalise(rng.standard_normal((6000, 64)).astype(np.float32)))
    q = normalise(rng.standard_normal((1, 64)).astype(np.float32))[0]
    expected = full_scan(monkeypatch, matrix, q, vis, 100)
    everything = full_scan(monkeypatch, matrix, q, EVERYTHING, 100)
    assert {i for i, _ in everything} - {i for i, _ in expected}  # the filter removes some
    assert_same(exact_candidates(matrix, q, vis, 100), expected)


def test_crowded_scores_fall_back_to_the_full_scan(monkeypatch):
    # 400 rows a hair apart around the query: the fetched 300 cannot settle the top 100.
    rng = np.random.default_rng(3)
    base = normalise(rng.standard_normal((1, 64)).astype(np.float32))[0]
    near = normalise(base + 1e-4 * rng.standard_normal((400, 64)).astype(np.float32))
    far = normalise(rng.standard_normal((5600, 64)).astype(np.float32))
    matrix = matrix_of(np.vstack([far, near]))
    expected = full_scan(monkeypatch, matrix, base, EVERYTHING, 100)
    answers = spy(monkeypatch)
    assert_same(exact_candidates(matrix, base, EVERYTHING, 100), expected)
    assert answers == [None]


def test_a_row_that_is_not_finite_turns_the_first_pass_off(monkeypatch):
    rng = np.random.default_rng(5)
    vectors = normalise(rng.standard_normal((5000, 64)).astype(np.float32))
    vectors[17, 3] = np.inf
    matrix = matrix_of(vectors)
    answers = spy(monkeypatch)
    exact_candidates(matrix, vectors[0], EVERYTHING, 10)
    assert answers == [None]


def test_whole_recalls_rank_the_same_with_the_first_pass(make_note, monkeypatch):
    words = [
        "heron",
        "pond",
        "reed",
        "willow",
        "otter",
        "kingfisher",
        "mallard",
        "bulrush",
        "alder",
        "sedge",
    ]
    for i in range(120):
        picked = " ".join(words[(i * 7 + j * 3) % len(words)] for j in range(5))
        make_note(
            f"Entry {i}: the {picked} by the water.",
            domain="work" if i % 4 == 0 else "personal",
            jurisdiction="home" if i % 3 else "wild",
            days_old=200 - i,
        )
    embed_missing()
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (0, 0))
    queries = [" ".join(words[j : j + 3]) for j in range(8)]
    kinds = [{"scope": "both"}, {"scope": "home", "domains": ["work"]}, {"scope": "wild"}]
    before = [recall(q, limit=30, **kw) for q in queries for kw in kinds]
    vis = Visibility.of(domains=None, scope="both", as_of=None)
    full_hits = vector_search("heron reed otter", vis, 100)()
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (1, 200_000))
    answers = spy(monkeypatch)
    after = [recall(q, limit=30, **kw) for q in queries for kw in kinds]
    assert any(a is not None for a in answers)  # the first pass ran
    assert [[p["id"] for p in r] for r in after] == [[p["id"] for p in r] for r in before]
    for old, new in zip(before, after, strict=True):
        assert [p["score"] for p in new] == pytest.approx([p["score"] for p in old], abs=2e-6)
    assert_same(vector_search("heron reed otter", vis, 100)(), full_hits)
    assert get_embedder().dim == len(matrix_module.vector_matrix().vectors[0])


def test_rows_appended_after_the_scan_began_are_left_out(monkeypatch):
    # Another thread may extend the float16 copy past the rows this scan's mask covers.
    rng = np.random.default_rng(13)
    vectors = normalise(rng.standard_normal((6000, 64)).astype(np.float32))
    matrix = matrix_of(vectors)
    q = vectors[5500]  # its best match lies past the first 5000 rows
    assert exact_candidates(matrix, q, EVERYTHING, 5)[0][0] == 5501  # the copy holds 6000
    mask = np.ones(5000, dtype=bool)
    for each in (None, mask):
        rows = matrix_module._coarse_rows(matrix, 5000, q, each, 100)
        assert rows is not None and len(rows) >= 100 and rows.max() < 5000


def test_the_float16_pass_runs_exactly_within_coarse_rows(monkeypatch):
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    rng = np.random.default_rng(0)
    for n, coarse in ((49, False), (50, True), (60, True), (61, False)):
        matrix = matrix_of(rng.standard_normal((n, 8)).astype(np.float32))
        q = rng.standard_normal(8).astype(np.float32)
        # k * COARSE_FETCH covers every row: the float16 pass, when it runs, returns them all.
        assert (_coarse_rows(matrix, n, q, None, 20) is not None) == coarse


def test_the_float16_pass_with_one_or_no_visible_row(monkeypatch):
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    rng = np.random.default_rng(1)
    matrix = matrix_of(rng.standard_normal((55, 8)).astype(np.float32))
    q = rng.standard_normal(8).astype(np.float32)
    first = Visibility.of(domains=None, scope="both", as_of=START)  # only row 0 existed then
    assert [i for i, _ in exact_candidates(matrix, q, first, 5)] == [1]
    nowhere = Visibility.of(domains=["nowhere"], scope="both", as_of=None)
    assert exact_candidates(matrix, q, nowhere, 5) == []


def test_the_float16_copy_is_kept_not_rebuilt_when_no_row_was_added():
    matrix = matrix_of(np.random.default_rng(5).standard_normal((10, 8)).astype(np.float32))
    first = _coarse_index(matrix)
    assert first.ntotal == 10 and _coarse_index(matrix) is first


def test_no_visible_row_is_an_empty_list_of_row_indices(monkeypatch):
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    matrix = matrix_of(np.random.default_rng(7).standard_normal((55, 8)).astype(np.float32))
    hidden = np.zeros(55, dtype=bool)
    rows = _coarse_rows(matrix, 55, matrix.vectors[0], hidden, 5)
    assert rows is not None and matrix.ids[rows].tolist() == []  # float indices would raise


def test_the_float16_pass_keeps_the_first_row_when_rows_were_added_meanwhile(monkeypatch):
    # The copy holds 58 rows, the recall reads 55 (three were appended under it): rows 0-54
    # are searched, the first one included.
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    vectors = np.zeros((58, 8), dtype=np.float32)
    vectors[:, 1] = 1.0
    vectors[:5, 0] = [10, 9, 8, 7, 6]
    matrix = matrix_of(vectors)
    rows = _coarse_rows(matrix, 55, np.eye(8, dtype=np.float32)[0], None, 5)
    assert rows is not None and rows.tolist() == [0, 1, 2, 3, 4]


def test_the_exact_top_one_holds_when_float16_rounding_swaps_two_rows(monkeypatch):
    # Row 0 scores 20004.8 and row 1 20001.6, but in float16 (steps of 0.5 near 1000) row 0
    # reads 10 * (1000 + 1000) and row 1 10 * (1000.5 + 1000): the margin, scaled by |q| and by
    # the largest row norm, keeps both for the float32 rescoring. (The embedder's vectors are
    # unit vectors; the bound holds for any.)
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    vectors = np.zeros((55, 8), dtype=np.float32)
    vectors[:, 2] = 1.0
    vectors[0, :2], vectors[1, :2] = [1000.24, 1000.24], [1000.26, 999.9]
    q = np.array([10, 10, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    assert [i for i, _ in exact_candidates(matrix_of(vectors), q, EVERYTHING, 1)] == [1]


def test_the_float16_pass_rescores_only_rows_within_twice_its_error_of_the_kth(monkeypatch):
    # |q| = 1 and the largest row norm is 1000: twice the error is 1.18 (three times, 1.76).
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    vectors = np.zeros((55, 8), dtype=np.float32)
    vectors[:, 2] = 1.0
    vectors[0, 0], vectors[1, 0], vectors[2, 1] = 10.0, 8.5, 1000.0
    q = np.eye(8, dtype=np.float32)[0]
    assert _coarse_rows(matrix_of(vectors), 55, q, None, 1).tolist() == [0]
    # Only the last row fetched decides whether rows past the fetch may qualify.
    vectors[1, 0] = 9.5
    assert _coarse_rows(matrix_of(vectors), 55, q, None, 1).tolist() == [0, 1]
