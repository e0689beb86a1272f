"""The semantic model sleep fits on the owner's text (memory/vectors/semantic.py,
sleep/semantic.py)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from memory.models import Vector
from memory.recall import recall
from memory.sleep.run import run_sleep
from memory.vectors import semantic
from memory.vectors.embed import HashingEmbedder, get_embedder

TOPICS = [
    "heron pond reeds fishing dawn wings",
    "tomato garden soil seedlings compost watering",
    "boiler radiator plumber heating winter pipes",
    "violin practice scales concert orchestra bow",
]


@pytest.fixture
def on(settings):
    settings.GROVE_SEMANTIC_MODEL = True


def notes(make_note, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        words = TOPICS[i % len(TOPICS)].split()
        make_note(f"Note {i}: " + " ".join(words[(i + j) % len(words)] for j in range(4)))


def sleep_semantic() -> dict:
    return run_sleep(requested_by="test", only_step="semantic").steps["semantic"]


def test_sleep_fits_a_model_and_recall_searches_its_vectors(on, make_note):
    notes(make_note, 60)
    assert isinstance(get_embedder(), HashingEmbedder)
    step = sleep_semantic()
    model = get_embedder()
    assert step["due"] == "no model yet" and model.name == step["model"]
    assert model.name.startswith(semantic.PREFIX) and semantic.model_path().exists()
    assert Vector.objects.filter(model=model.name).count() == step["count"] == 61
    assert recall("heron reeds")


def test_nothing_is_fitted_while_it_is_off(make_note):
    notes(make_note, 60)
    assert sleep_semantic()["count"] == 0
    assert not semantic.model_path().exists()


def test_removing_the_model_falls_back_to_hashing(on, make_note):
    notes(make_note, 60)
    sleep_semantic()
    assert not isinstance(get_embedder(), HashingEmbedder)
    semantic.model_path().unlink()
    assert isinstance(get_embedder(), HashingEmbedder)
    assert recall("heron reeds")  # words still find it; vectors come back with the next sleep


def test_it_is_rebuilt_after_enough_new_text_and_not_before(on, make_note):
    notes(make_note, 60)
    first = sleep_semantic()["model"]
    notes(make_note, 10, start=60)
    assert sleep_semantic()["due"] == ""
    assert get_embedder().name == first
    notes(make_note, semantic.REFIT_MIN_NEW, start=70)
    step = sleep_semantic()
    assert step["due"].startswith("grew from 61") and step["model"] != first
    assert get_embedder().name == step["model"]
    assert not Vector.objects.filter(model=first).exists()  # the retired model's vectors


def test_a_corrupt_file_is_refused_with_a_reason_and_rebuilt(on, make_note, caplog):
    notes(make_note, 60)
    sleep_semantic()
    semantic.model_path().write_bytes(b"PK\x03\x04 not a model")
    with caplog.at_level(logging.WARNING, logger="memory.vectors.semantic"):
        assert isinstance(get_embedder(), HashingEmbedder)
    assert "refused: unreadable" in caplog.text
    assert recall("heron reeds")
    step = sleep_semantic()
    assert step["due"].startswith("refused: unreadable")
    assert get_embedder().name == step["model"]


def test_a_model_of_the_wrong_dimension_is_refused_and_rebuilt(on, make_note):
    notes(make_note, 60)
    sleep_semantic()
    model = semantic.load()
    model.meta["dim"] = model.dim * 2
    with pytest.raises(semantic.ModelRefused, match="wrong dimension"):
        semantic.SemanticEmbedder(
            vocabulary=list(model._counter.vocabulary),
            idf=model._idf,
            components=model._components_t.T,
            meta=model.meta,
        )
    with np.load(semantic.model_path()) as data:
        arrays = dict(data)
    arrays["meta"] = np.array('{"fitted_on": 61, "dim": 7}')
    np.savez(semantic.model_path(), **arrays)
    assert isinstance(get_embedder(), HashingEmbedder)
    assert sleep_semantic()["due"].startswith("refused: wrong dimension")
    assert not isinstance(get_embedder(), HashingEmbedder)


def test_vectors_of_another_dimension_under_its_name_refuse_it(on, make_note):
    notes(make_note, 60)
    name = sleep_semantic()["model"]
    node = Vector.objects.filter(model=name).first().node
    Vector.objects.filter(model=name, node=node).update(dim=3)
    semantic.forget()
    assert isinstance(get_embedder(), HashingEmbedder)
    assert sleep_semantic()["due"].startswith("refused: wrong dimension: vectors stored under")


def test_a_text_with_no_known_word_still_gets_a_unit_vector(on, make_note):
    notes(make_note, 60)
    sleep_semantic()
    vectors = get_embedder().embed(["zzzqqq", "…", "heron pond"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
