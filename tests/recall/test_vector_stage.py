"""Recall's vector stage (memory.recall.vector_search): the vector list alone keeps to the
caller's domains and as-of instant (the other lists switched off), one vector is scanned, a hit
at the threshold is kept, and a vector weight of 0 reads no vector. Searched on a worker thread
while the word lists are read (issue 17): the same hits and packets as on the caller's thread,
under every visibility filter, and no database connection of the worker's own. Real SQLite, a
real vector index, a real thread."""

from __future__ import annotations

import dataclasses
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

import memory.recall as recall_module
from memory.recall import rank, recall, vector_search
from memory.vectors.embed import embed_missing, get_embedder
from memory.vectors.index import sync_index
from memory.vectors.matrix import vector_matrix
from memory.visibility import Visibility
from tests._helpers.vectors import embed_one

QUERY = "heron reed otter by the water"
WORDS = ["heron", "pond", "reed", "willow", "otter", "kingfisher"]
FILTERS = [
    {"scope": "both"},
    {"scope": "home"},
    {"scope": "both", "domains": ["garden"]},
    {"scope": "both", "as_of": "PAST"},
]


@pytest.fixture
def indexed(make_note, settings, tmp_path):
    """Twelve notes in the vector index (two domains, some written 30 days back, some wild) and
    two written since it was built (the exact scan's rows)."""
    settings.GROVE_VECTOR_INDEX_DIR = tmp_path / "vector-index"
    settings.GROVE_ANN_MIN_ROWS = 1
    for i in range(12):
        body = "The " + " ".join(WORDS[(i + j) % 6] for j in range(3)) + f" by the water {i}."
        make_note(body, domain="garden" if i % 2 else "personal", days_old=30 if i < 4 else 0)
    embed_missing()
    embedder = get_embedder()
    assert sync_index(model=embedder.name, dim=embedder.dim) is not None
    make_note("An otter by the reed, seen since.", domain="garden")
    make_note("A heron over the water, seen since.", jurisdiction="wild", kind="internet")
    embed_missing()


@pytest.fixture
def worker(monkeypatch):
    """Every search handed to one worker thread of this test's own; the names of the threads
    that searched."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="test-vectors")
    monkeypatch.setattr(recall_module, "_pool", lambda: pool)
    monkeypatch.setattr(recall_module, "PARALLEL_FROM_ROWS", 0)
    searched: list[str] = []
    nearest = recall_module._nearest

    def recorded(*args):
        searched.append(threading.current_thread().name)
        return nearest(*args)

    monkeypatch.setattr(recall_module, "_nearest", recorded)
    yield pool, searched
    pool.shutdown()


def _filters(spec: dict) -> dict:
    past = (timezone.now() - timedelta(days=10)).isoformat()
    return {k: past if v == "PAST" else v for k, v in spec.items()}


@pytest.mark.parametrize("spec", FILTERS)
def test_on_the_worker_the_vector_list_is_the_one_found_here(indexed, monkeypatch, spec):
    vis = Visibility.of(**{"domains": None, "as_of": None, **_filters(spec)})
    here = vector_search(QUERY, vis, 5)()
    assert here, "the fixture holds vector hits for every filter"
    pool = ThreadPoolExecutor(max_workers=1)
    monkeypatch.setattr(recall_module, "_pool", lambda: pool)
    monkeypatch.setattr(recall_module, "PARALLEL_FROM_ROWS", 0)
    assert vector_search(QUERY, vis, 5)() == here
    pool.shutdown()


@pytest.mark.parametrize("spec", FILTERS)
def test_recall_with_the_worker_returns_what_it_returns_without(indexed, worker, spec):
    _, searched = worker
    args = _filters(spec)
    with_worker = recall(QUERY, **args)
    assert searched and all(name.startswith("test-vectors") for name in searched)
    searched.clear()
    recall_module.PARALLEL_FROM_ROWS = 10**9  # monkeypatch puts back its own value after
    assert recall(QUERY, **args) == with_worker
    assert searched == [threading.current_thread().name]
    assert with_worker


def test_a_small_store_is_searched_on_the_callers_thread(indexed, monkeypatch):
    searched: list[str] = []
    nearest = recall_module._nearest
    monkeypatch.setattr(
        recall_module,
        "_nearest",
        lambda *a: searched.append(threading.current_thread().name) or nearest(*a),
    )
    assert recall(QUERY, scope="both")
    assert searched == [threading.current_thread().name]


def test_the_worker_opens_no_database_connection(indexed, worker):
    pool, searched = worker
    assert recall(QUERY, scope="both")
    assert searched, "the search ran on the worker"

    def connected() -> bool:
        return connections["default"].connection is not None

    assert pool.submit(connected).result() is False

    def touch() -> bool:  # the probe can tell: a query on the worker opens a connection
        connections["default"].ensure_connection()
        opened = connected()
        connections["default"].close()
        return opened

    assert pool.submit(touch).result() is True


# The very situation under test: a process with threads forks.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_process_searches_on_workers_of_its_own():
    """A pool used before a fork (a web server's or django-q2's workers fork) would queue the
    child's searches for threads that only exist in the parent."""
    assert recall_module._pool().submit(threading.get_ident).result(timeout=5)
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's exit status is the assertion)
        try:
            ok = recall_module._pool().submit(lambda: 2).result(timeout=5) == 2
        except Exception:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


EVERYTHING = Visibility.of(domains=None, scope="both", as_of=None)


def test_one_vector_and_no_index_is_scanned(make_note):
    note = make_note("A heron stands by the reed.")
    embed_one(note)
    assert vector_matrix().n == 1
    [(found, _score)] = vector_search("heron reed", EVERYTHING, 5)()
    assert found == note.pk


def test_a_vector_hit_scoring_exactly_the_threshold_is_kept(make_note, monkeypatch):
    note = make_note("A heron stands by the reed.")
    other = make_note("Otters slide down the muddy bank.")
    embed_one(note)
    embed_one(other)
    monkeypatch.setattr(recall_module, "VECTOR_MIN_SIMILARITY", -1.0)
    hits = dict(vector_search("heron reed", EVERYTHING, 5)())
    # A float32 score, widened: the threshold is set to exactly what the note scores.
    monkeypatch.setattr(recall_module, "VECTOR_MIN_SIMILARITY", hits[note.pk])
    assert hits[other.pk] < hits[note.pk]
    assert vector_search("heron reed", EVERYTHING, 5)() == [(note.pk, hits[note.pk])]


def test_with_the_vector_weight_zero_no_vector_cosine_is_read_or_told(make_note, monkeypatch):
    note = make_note("A heron stands by the reed.")
    embed_one(note)
    [told] = recall("heron reed", why=True)
    assert told["id"] == note.pk and "vector" in told["why"]
    monkeypatch.setattr(rank, "WEIGHTS", dataclasses.replace(rank.WEIGHTS, vector=0.0))
    [told] = recall("heron reed", why=True)
    assert told["id"] == note.pk and "vector" not in told["why"]


WORK_SECRET = "Quarterly merger codename bluefin heron"


@pytest.fixture
def vectors_only(monkeypatch):
    """Recall with the word, substring and date lists switched off: only the vector path can
    find anything."""
    import memory.recall.rank as rank_module

    for name in ("fts_candidates", "trigram_candidates", "date_candidates"):
        monkeypatch.setattr(rank_module, name, lambda *args, **kwargs: [])
    return recall_module.recall


def _ids(results) -> list[int]:
    return [p["id"] for p in results]


def test_the_vector_path_keeps_to_the_callers_domains(make_note, vectors_only):
    foreign = make_note(WORK_SECRET, domain="work")
    embed_missing()
    assert foreign.pk in _ids(vectors_only(WORK_SECRET, scope="both", domains=["work"]))
    assert foreign.pk not in _ids(vectors_only(WORK_SECRET, scope="both", domains=["personal"]))


def test_the_vector_path_keeps_to_the_as_of_instant(make_note, vectors_only):
    later = make_note(WORK_SECRET)
    embed_missing()
    assert later.pk in _ids(vectors_only(WORK_SECRET, scope="both"))
    before = (later.created_at - timedelta(seconds=1)).isoformat()
    assert later.pk not in _ids(vectors_only(WORK_SECRET, scope="both", as_of=before))


def test_the_vector_path_keeps_to_the_callers_domains_as_of_an_instant(make_note, vectors_only):
    foreign = make_note(WORK_SECRET, domain="work")
    embed_missing()
    now = timezone.now().isoformat()
    assert foreign.pk in _ids(vectors_only(WORK_SECRET, scope="both", domains=["work"], as_of=now))
    assert foreign.pk not in _ids(
        vectors_only(WORK_SECRET, scope="both", domains=["personal"], as_of=now)
    )
