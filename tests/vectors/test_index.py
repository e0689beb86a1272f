"""The vector index (memory.vectors.index): built and kept up by sleep's cross-link step, rebuilt
when stale or damaged, and filtered by recall exactly as the exact scan filters."""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

import memory.recall as recall_module
from memory.models import Edge, Node, Vector
from memory.recall import recall, vector_search
from memory.sleep.crosslink import crosslink
from memory.vectors.embed import embed_missing, get_embedder
from memory.vectors.index import current, index_dir, open_index, sync_index
from memory.visibility import Visibility
from review.ceremony import seal
from tests._helpers.vectors import embed_one, place

WORDS = ["heron", "pond", "reed", "willow", "otter", "kingfisher", "mallard", "bulrush"]


@pytest.fixture
def indexed(settings, tmp_path):
    """Every vector count deserves the index here; it lives in this test's own directory."""
    settings.GROVE_VECTOR_INDEX_DIR = tmp_path / "vector-index"
    settings.GROVE_ANN_MIN_ROWS = 1


@pytest.fixture
def pond(make_note, indexed) -> list[Node]:
    """Thirty-two notes about a pond across two domains and both scopes, embedded."""
    notes = []
    for i in range(32):
        words = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(4))
        notes.append(
            make_note(
                f"The {words} by the water, entry {i}.",
                domain="work" if i % 4 == 0 else "personal",
                kind="note" if i % 3 else "hearsay",
                jurisdiction="home" if i % 3 else "wild",
                days_old=40 - i,
            )
        )
    embed_missing()
    return notes


def model() -> tuple[str, int]:
    embedder = get_embedder()
    return embedder.name, embedder.dim


def test_sleep_builds_the_index_in_the_data_dir(pond):
    crosslink()
    index = open_index(model=model()[0], dim=model()[1])
    assert index is not None and index.rows == Vector.objects.count()
    assert (index_dir(model()[0]) / "vectors.f16").stat().st_size == index.rows * model()[1] * 2
    assert set(index.ids.tolist()) == set(Vector.objects.values_list("node_id", flat=True))


def test_below_the_threshold_no_index_is_written(pond, settings):
    settings.GROVE_ANN_MIN_ROWS = 10_000
    assert sync_index(model=model()[0], dim=model()[1]) is None
    assert not index_dir(model()[0]).exists()


def test_new_vectors_are_appended_without_retraining(pond, make_note, caplog):
    first = sync_index(model=model()[0], dim=model()[1])
    note = make_note("A grebe dives under the reed.")
    embed_missing()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="grove.vector_index"):
        second = sync_index(model=model()[0], dim=model()[1])
    assert second.rows == first.rows + 1 and int(second.ids[-1]) == note.pk
    assert np.array_equal(second.centroids, first.centroids)
    assert "building" not in caplog.text


def test_a_corrupt_index_is_rebuilt_with_a_log_line(pond, caplog):
    built = sync_index(model=model()[0], dim=model()[1])
    (built.path / "rows.npz").write_bytes(b"not an archive")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="grove.vector_index"):
        assert open_index(model=model()[0], dim=model()[1]) is None
        rebuilt = sync_index(model=model()[0], dim=model()[1])
    assert "checksum differs" in caplog.text and "building" in caplog.text
    assert rebuilt.rows == built.rows


def test_an_index_of_another_database_state_is_rebuilt(pond, caplog):
    built = sync_index(model=model()[0], dim=model()[1])
    # The database loses a vector the index holds (a restore from an older backup, say).
    Vector.objects.filter(node_id=int(built.ids[5])).delete()
    with caplog.at_level(logging.WARNING, logger="grove.vector_index"):
        rebuilt = sync_index(model=model()[0], dim=model()[1])
    assert "does not match" in caplog.text
    assert rebuilt.rows == built.rows - 1 and int(built.ids[5]) not in set(rebuilt.ids.tolist())


def test_an_index_of_another_model_or_dim_is_not_used(pond, caplog):
    built = sync_index(model=model()[0], dim=model()[1])
    meta = json.loads((built.path / "meta.json").read_text())
    (built.path / "meta.json").write_text(json.dumps({**meta, "dim": 3}))
    with caplog.at_level(logging.WARNING, logger="grove.vector_index"):
        assert current(model=model()[0], dim=model()[1]) is None
    assert "dim is 3" in caplog.text


def visibilities(pond: list[Node]) -> list[Visibility]:
    as_of = pond[20].created_at + timedelta(seconds=1)
    return [
        Visibility.of(domains=None, scope="both", as_of=None),
        Visibility.of(domains=["work"], scope="both", as_of=None),
        Visibility.of(domains=["personal"], scope="home", as_of=None),
        Visibility.of(domains=None, scope="wild", as_of=None),
        Visibility.of(domains=None, scope="both", as_of=as_of),
        Visibility.of(domains=["work", "nowhere"], scope="home", as_of=as_of),
        Visibility.of(domains=["nowhere"], scope="both", as_of=None),
    ]


def test_the_vector_stage_filters_exactly_as_the_exact_scan(pond, settings):
    query = "heron reed otter by the water"
    settings.GROVE_ANN_MIN_ROWS = 10_000
    exact = [vector_search(query, vis, 40)() for vis in visibilities(pond)]
    settings.GROVE_ANN_MIN_ROWS = 1
    crosslink()
    assert current(model=model()[0], dim=model()[1]) is not None
    assert len(exact[1]) < len(exact[0])  # the filters have work to do
    for vis, expected in zip(visibilities(pond), exact, strict=True):
        found = vector_search(query, vis, 40)()
        # The same rows; the same order up to float16 rounding of near ties.
        assert {i for i, _ in found} == {i for i, _ in expected}, vis
        assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=2e-3)


def test_recall_hides_decayed_and_sealed_nodes_with_the_index_present(pond, settings):
    crosslink()
    assert current(model=model()[0], dim=model()[1]) is not None
    query = "heron pond reed willow"
    before = [p["id"] for p in recall(query, scope="both", limit=40)]
    gone, sealed = pond[0], pond[8]
    assert gone.pk in before and sealed.pk in before
    Node.objects.filter(pk=gone.pk).update(decayed_at=timezone.now())
    seal(sealed.pk, owner="owner", reason="private")
    with_index = [p["id"] for p in recall(query, scope="both", limit=40)]
    settings.GROVE_ANN_MIN_ROWS = 10_000
    settings.GROVE_VECTOR_INDEX_DIR = settings.GROVE_VECTOR_INDEX_DIR.parent / "none"
    exact = [p["id"] for p in recall(query, scope="both", limit=40)]
    assert gone.pk not in with_index and sealed.pk not in with_index
    assert with_index == exact


def test_recall_sees_notes_written_after_the_last_sleep(pond, make_note):
    crosslink()
    fresh = make_note("A bittern booms across the marsh at dusk.")
    embed_missing()
    vis = Visibility.of(domains=None, scope="both", as_of=None)
    assert fresh.pk in [i for i, _ in vector_search("bittern booms marsh dusk", vis, 5)()]


def test_rescored_pages_are_released_after_enough_rows_not_every_query(pond, monkeypatch):
    from memory.vectors import search as search_module

    crosslink()
    index = current(model=model()[0], dim=model()[1])
    assert index is not None
    index._faiss()  # built (and its pages released) before counting
    released = []
    monkeypatch.setattr(search_module, "RELEASE_AFTER_ROWS", 40)
    monkeypatch.setattr(type(index), "release", lambda self: released.append(self._rescored))
    vis = Visibility.of(domains=None, scope="both", as_of=None)
    q = get_embedder().embed(["heron reed"])[0]
    assert len(index.search(q, vis, 10)) == 10  # 30 rows rescored: kept mapped
    assert released == []
    index.search(q, vis, 10)  # 60 rows: released
    assert released == [60]


def test_a_vector_whose_length_disagrees_with_its_dim_does_not_crash_recall(
    make_note, caplog, indexed
):
    note = make_note("The heron stands in the reeds.")
    broken = make_note("A broken vector belongs to this heron note.")
    embed_missing()
    dim = model()[1]
    Vector.objects.filter(node=broken).update(data=b"\0" * (dim * 4 - 4))
    with caplog.at_level(logging.WARNING):
        assert note.pk in [p["id"] for p in recall("heron")]
        assert sync_index(model=model()[0], dim=dim).rows == Vector.objects.count() - 1
        assert open_index(model=model()[0], dim=dim) is not None  # skipped, not a mismatch
    assert f"has {dim * 4 - 4} bytes for dim {dim}" in caplog.text


def test_crosslink_through_the_index_keeps_cross_links_rules(make_note, root_note, indexed):
    place(root_note, 180)  # opposite the others, so it is linked to nothing
    near = place(make_note("Near."), 0)
    place(make_note("Far."), 80)
    gone = place(make_note("Gone."), 2)
    Node.objects.filter(pk=gone.pk).update(decayed_at=near.created_at)
    hidden = place(make_note("Hidden."), 1.5)
    seal(hidden.pk, owner="owner", reason="private")
    place(make_note("Elsewhere.", domain="work"), 1)
    newest = place(make_note("Newest."), 3)
    result = crosslink()
    assert result["index_rows"] == 7
    edges = sorted(Edge.objects.filter(kind="similar").values_list("from_node", "to_node"))
    assert edges == [(newest.pk, near.pk)]
    assert crosslink()["count"] == 0


EVERYTHING = Visibility.of(domains=None, scope="both", as_of=None)

QUERY = "heron reed otter by the water"


def test_with_an_index_and_nothing_since_the_vector_hits_are_the_index_s_own(make_note, indexed):
    words = ["heron", "pond", "reed", "willow", "otter", "kingfisher"]
    for i in range(12):
        make_note("The " + " ".join(words[(i + j) % 6] for j in range(3)) + f" by the water {i}.")
    embed_missing()
    embedder = get_embedder()
    assert sync_index(model=embedder.name, dim=embedder.dim) is not None
    found = vector_search(QUERY, EVERYTHING, 5)()
    index = open_index(model=embedder.name, dim=embedder.dim)
    # Float16 rescored cosines: an exact float32 scan of every vector scores them otherwise.
    expected = [
        (i, s)
        for i, s in index.search(embedder.embed([QUERY])[0], EVERYTHING, 5)
        if s >= recall_module.VECTOR_MIN_SIMILARITY
    ]
    assert len(expected) == 5
    assert found == expected


def test_an_index_of_one_row_with_nothing_since_is_searched(make_note, indexed):
    note = make_note("A heron stands by the reed.")
    embed_one(note)
    embedder = get_embedder()
    assert sync_index(model=embedder.name, dim=embedder.dim).rows == 1
    [(found, _score)] = vector_search("heron reed", EVERYTHING, 5)()
    assert found == note.pk
