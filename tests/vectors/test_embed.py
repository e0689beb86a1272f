from __future__ import annotations

import numpy as np
import pytest

from memory.models import Vector
from memory.vectors.embed import (
    HashingEmbedder,
    configured_embedder,
    embed_missing,
    from_blob,
    get_embedder,
    normalise,
)


@pytest.fixture(scope="module")
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


def test_it_never_returns_a_zero_vector(embedder):
    vectors = embedder.embed(["A.", "...", "x", "🌱", "the cat sat on the mat"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_equal_texts_agree_and_unrelated_texts_do_not(embedder):
    a, b, c = embedder.embed(["the boiler needs a service", "the boiler needs a service", "…"])
    assert a @ b == pytest.approx(1.0)
    assert abs(a @ c) < 0.5


def test_similar_texts_are_closer_than_unrelated_ones(embedder):
    a, b, c = embedder.embed(
        ["the cat sat on the mat", "a cat sat on a mat", "quarterly revenue forecast"]
    )
    assert a @ b > 0.4 > abs(a @ c)


def test_two_instances_make_the_same_vectors(embedder):
    text = ["same words in every process"]
    assert np.array_equal(embedder.embed(text), HashingEmbedder().embed(text))


def the_vectorizers_own_transform(embedder: HashingEmbedder, texts: list[str]) -> np.ndarray:
    """Embedding as it was written first: HashingVectorizer.transform, then the projection."""
    sparse = embedder._vectorizer.transform(texts).astype(np.float32)
    dense = (sparse @ embedder._components).toarray().astype(np.float32)
    assert dense.any(axis=1).all()  # no text here takes the no-word path
    return normalise(dense)


def test_it_makes_exactly_the_vectorizers_vectors(embedder):
    texts = [
        "the cat sat on the mat",
        "Café naïve résumé — Ünïcödé",
        "東京タワーは赤い",
        "A. B. C.",
        "word " * 500,
        "The heron stands in the reeds; the reeds stand in the water.",
    ]
    expected = the_vectorizers_own_transform(embedder, texts)
    assert np.array_equal(embedder.embed(texts), expected)
    for text, row in zip(texts, expected, strict=True):  # one at a time, as recall embeds
        assert np.array_equal(embedder.embed([text])[0], row)


def test_it_embeds_live_nodes_missing_a_vector_in_batches(make_note):
    nodes = [make_note(f"note number {i} about tomatoes") for i in range(5)]
    assert Vector.objects.count() == 0
    assert embed_missing(batch=2) == 6  # the five notes and the fixture's import node
    assert embed_missing(batch=2) == 0
    vector = Vector.objects.get(node=nodes[0])
    assert vector.model == get_embedder().name and vector.dim == get_embedder().dim
    assert np.linalg.norm(from_blob(vector.data, vector.dim)) == pytest.approx(1.0, abs=1e-5)


class OnesEmbedder:
    """A configured embedder of the test's own (GROVE_EMBEDDER names any such class)."""

    name, dim = "ones-4", 4

    def __init__(self, path: str = "") -> None:
        self.path = path

    def embed(self, texts):
        return np.full((len(texts), self.dim), 0.5, dtype=np.float32)


def test_switching_the_embedder_re_embeds_under_the_new_model(make_note, settings):
    make_note("note about tomatoes")
    assert embed_missing() == 2
    settings.GROVE_EMBEDDER, settings.GROVE_EMBEDDER_PATH = f"{__name__}.OnesEmbedder", "/models/x"
    configured_embedder.cache_clear()
    try:
        assert get_embedder().path == "/models/x"
        assert embed_missing() == 2  # the old model's vectors do not count for the new one
        assert set(Vector.objects.values_list("model", flat=True)) == {
            HashingEmbedder().name,
            "ones-4",
        }
    finally:
        configured_embedder.cache_clear()


def test_a_limited_run_embeds_the_oldest_first_and_skips_decayed_nodes(make_note):
    newer = make_note("written first, dated today")
    older = make_note("written second, dated a month ago", days_old=30)
    gone = make_note("decayed before the run", days_old=60)
    Node = type(gone)
    Node.objects.filter(pk=gone.pk).update(decayed_at=gone.created_at)
    before = set(Vector.objects.values_list("node_id", flat=True))
    assert older.pk not in before and newer.pk not in before
    made = embed_missing(limit=1)
    assert made == 1
    embedded = set(Vector.objects.values_list("node_id", flat=True)) - before
    assert embedded == {older.pk}  # store clock order, not id order; the decayed one skipped
    assert embed_missing() >= 1
    assert not Vector.objects.filter(node_id=gone.pk).exists()
    assert Vector.objects.filter(node_id__in=[newer.pk, older.pk]).count() == 2


def test_vectors_written_in_bulk_match_a_direct_embedding(make_note, embedder):
    notes = [make_note(f"bulk note {i} about beans and frost") for i in range(3)]
    embed_missing(batch=2)
    for note in notes:
        stored = Vector.objects.get(node=note, model=embedder.name)
        assert np.array_equal(from_blob(stored.data, stored.dim), embedder.embed([note.body])[0])


def test_a_later_sleep_embeds_what_arrived_or_came_back_since_the_last_complete_run(make_note):
    from memory.forgetting import let_go, restore
    from memory.sleep.run import run_sleep

    gone = make_note("let go before the first sleep, restored after it")
    let_go(gone.pk, actor="owner")
    first = run_sleep(requested_by="test").steps["embed"]
    assert first["complete"] and not Vector.objects.filter(node_id=gone.pk).exists()
    restore(gone.pk, actor="owner")
    later = make_note("arrived after the first sleep")
    second = run_sleep(requested_by="test").steps["embed"]
    assert second["count"] == 2 and second["complete"]
    assert Vector.objects.filter(node_id__in=[gone.pk, later.pk]).count() == 2
