"""The optional model2vec embedder: a tiny model the test builds itself, loaded from a path."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from memory.recall import recall
from memory.vectors.embed import HashingEmbedder, configured_embedder, embed_missing, get_embedder

pytest.importorskip("model2vec")

WORDS = ["[UNK]", "[PAD]", "tomato", "garden", "piano", "music"]


@pytest.fixture
def tiny_model(tmp_path) -> Path:
    """Six tokens in 8 dimensions: tomato and garden share a direction, piano and music
    another; saved in model2vec's own format (safetensors, tokenizer.json, config.json)."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    vectors = np.zeros((len(WORDS), 8), dtype=np.float32)
    vectors[2, 0] = vectors[3, 0] = vectors[4, 2] = vectors[5, 2] = 1.0
    vectors[3, 1] = 0.2
    path = tmp_path / "tiny-m2v"
    StaticModel(vectors, tokenizer, normalize=True).save_pretrained(str(path))
    return path


@pytest.fixture
def use_model(settings):
    def use(path: Path | str) -> None:
        settings.GROVE_EMBEDDER = "memory.vectors.static.Model2VecEmbedder"
        settings.GROVE_EMBEDDER_PATH = str(path)
        configured_embedder.cache_clear()

    yield use
    configured_embedder.cache_clear()


def test_recall_finds_a_note_through_the_tiny_model_alone(make_note, tiny_model, use_model):
    use_model(tiny_model)
    tomato = make_note("Tomato")
    make_note("Piano music")
    embed_missing()
    assert get_embedder().name.startswith("model2vec-8-")
    # "garden" is no word of the note: only the model's vector can bring it.
    hits = recall("garden", why=True)
    assert hits and hits[0]["id"] == tomato.pk
    assert hits[0]["why"].startswith("vector 0.9")


def test_a_missing_model_falls_back_to_hashing_with_a_log_line(tmp_path, use_model, caplog):
    use_model(tmp_path / "no-such-model")
    with caplog.at_level(logging.WARNING, logger="memory.vectors.embed"):
        assert isinstance(get_embedder(), HashingEmbedder)
    assert "no-such-model" in caplog.text and "not found" in caplog.text


def test_a_corrupt_model_falls_back_to_hashing_and_recall_still_works(
    make_note, tiny_model, use_model, caplog
):
    (tiny_model / "model.safetensors").write_bytes(b"\x00\x01 not a tensor file")
    use_model(tiny_model)
    with caplog.at_level(logging.WARNING, logger="memory.vectors.embed"):
        embedder = get_embedder()
    assert isinstance(embedder, HashingEmbedder)
    assert "unreadable" in caplog.text
    note = make_note("Tomato seedlings in the garden")
    assert [p["id"] for p in recall("tomato seedlings")] == [note.pk]
