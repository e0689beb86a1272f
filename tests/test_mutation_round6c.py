"""Recall's vector stage: behaviours that round 6's one-child mutation run of memory.recall found
no test pinned (issue 16, docs/mutation.md): the vector index is the model's own and is read
even when it holds one row and nothing came since, one vector alone is scanned, a hit at the
threshold is kept, the matrix is cached per database, and a vector weight of 0 reads no vector.
Unit level, real SQLite, no browser and no worker."""

from __future__ import annotations

import dataclasses

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

import memory.recall as recall_module
import memory.vectors.matrix as matrix_module
from memory.models import Node, Vector
from memory.recall import _vector_candidates, rank, recall
from memory.recall.rank import _neighbours
from memory.vectors.embed import embed_missing, get_embedder, to_blob
from memory.vectors.index import open_index, sync_index
from memory.vectors.matrix import vector_matrix
from memory.visibility import Visibility
from tests._helpers.nodes import store

EVERYTHING = Visibility.of(domains=None, scope="both", as_of=None)
QUERY = "heron reed otter by the water"


@pytest.fixture
def indexed(settings, tmp_path):
    """Any vector count deserves the index here; it lives in this test's own directory."""
    settings.GROVE_VECTOR_INDEX_DIR = tmp_path / "vector-index"
    settings.GROVE_ANN_MIN_ROWS = 1


def _embed_one(node: Node) -> None:
    """A vector for this node only (embed_missing would embed the root note too)."""
    embedder = get_embedder()
    vector = embedder.embed([node.body])[0]
    Vector.objects.create(node=node, model=embedder.name, dim=embedder.dim, data=to_blob(vector))


def test_with_an_index_and_nothing_since_the_vector_hits_are_the_index_s_own(make_note, indexed):
    words = ["heron", "pond", "reed", "willow", "otter", "kingfisher"]
    for i in range(12):
        make_note("The " + " ".join(words[(i + j) % 6] for j in range(3)) + f" by the water {i}.")
    embed_missing()
    embedder = get_embedder()
    assert sync_index(model=embedder.name, dim=embedder.dim) is not None
    found = _vector_candidates(QUERY, EVERYTHING, 5)
    index = open_index(model=embedder.name, dim=embedder.dim)
    # Float16 rescored cosines: an exact float32 scan of every vector scores them otherwise.
    expected = [
        (i, s)
        for i, s in index.search(embedder.embed([QUERY])[0], EVERYTHING, 5)
        if s >= recall_module.VECTOR_MIN_SIMILARITY
    ]
    assert len(expected) == 5
    assert found == expected


def test_one_vector_and_no_index_is_scanned(make_note):
    note = make_note("A heron stands by the reed.")
    _embed_one(note)
    assert vector_matrix().n == 1
    [(found, _score)] = _vector_candidates("heron reed", EVERYTHING, 5)
    assert found == note.pk


def test_an_index_of_one_row_with_nothing_since_is_searched(make_note, indexed):
    note = make_note("A heron stands by the reed.")
    _embed_one(note)
    embedder = get_embedder()
    assert sync_index(model=embedder.name, dim=embedder.dim).rows == 1
    [(found, _score)] = _vector_candidates("heron reed", EVERYTHING, 5)
    assert found == note.pk


def test_a_vector_hit_scoring_exactly_the_threshold_is_kept(make_note, monkeypatch):
    note = make_note("A heron stands by the reed.")
    other = make_note("Otters slide down the muddy bank.")
    _embed_one(note)
    _embed_one(other)
    monkeypatch.setattr(recall_module, "VECTOR_MIN_SIMILARITY", -1.0)
    hits = dict(_vector_candidates("heron reed", EVERYTHING, 5))
    # A float32 score, widened: the threshold is set to exactly what the note scores.
    monkeypatch.setattr(recall_module, "VECTOR_MIN_SIMILARITY", hits[note.pk])
    assert hits[other.pk] < hits[note.pk]
    assert _vector_candidates("heron reed", EVERYTHING, 5) == [(note.pk, hits[note.pk])]


def test_each_database_name_has_its_own_vector_matrix(make_note):
    _embed_one(make_note("A heron stands by the reed."))
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


def test_with_the_vector_weight_zero_no_vector_cosine_is_read_or_told(make_note, monkeypatch):
    note = make_note("A heron stands by the reed.")
    _embed_one(note)
    [told] = recall("heron reed", why=True)
    assert told["id"] == note.pk and "vector" in told["why"]
    monkeypatch.setattr(rank, "WEIGHTS", dataclasses.replace(rank.WEIGHTS, vector=0.0))
    [told] = recall("heron reed", why=True)
    assert told["id"] == note.pk and "vector" not in told["why"]


@pytest.mark.sqlite_only  # the join order is SQLite's plan; PostgreSQL's planner takes no hint
def test_the_neighbours_read_starts_from_the_seeds_edges_in_both_directions(make_note):
    a, b = make_note("One."), make_note("Two.")
    vis = Visibility.of(domains=["personal"], scope="home", as_of=None)
    with CaptureQueriesContext(connection) as queries:
        _neighbours([a.pk, b.pk], vis)
    (read,) = [q["sql"] for q in queries.captured_queries if "FROM memory_edge e" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + read)
        plan = [row[3] for row in cursor.fetchall() if row[3].startswith(("SEARCH", "SCAN"))]
    # Not every node of the domain walked first (no ANALYZE on a real store to tell it better).
    assert [step.split()[1] for step in plan] == ["e", "n", "e", "n"], plan


@pytest.mark.sqlite_only  # the plan is SQLite's; PostgreSQL's planner takes no hint
def test_the_matrix_reads_only_the_new_vectors_by_their_id_range(make_note):
    _embed_one(make_note("A heron stands by the reed."))
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
    _embed_one(make_note("A heron stands by the reed."))
    first = vector_matrix()
    with CaptureQueriesContext(connection) as queries:
        assert vector_matrix() is first
    # Its last row still there, and the newest id: no read of the rows past it.
    assert len(queries.captured_queries) == 2
