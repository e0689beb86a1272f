"""The reranker (memory.rerank): its features, the model file it reads, and the fused order it
falls back to when that file cannot be used."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from memory import rerank
from memory.recall import recall


def _model(**weights: float) -> rerank.Model:
    n = len(rerank.FEATURES)
    coefficients = np.zeros(n)
    for name, value in weights.items():
        coefficients[rerank.FEATURES.index(name)] = value
    return rerank.Model(mean=np.zeros(n), scale=np.ones(n), coefficients=coefficients)


def _write(path, **changes) -> None:
    n = len(rerank.FEATURES)
    data = {
        "features": list(rerank.FEATURES),
        "mean": [0.0] * n,
        "scale": [1.0] * n,
        "coefficients": [0.0] * n,
    }
    path.write_text(json.dumps(data | changes))


def test_the_shipped_model_fits_the_features_recall_computes() -> None:
    model = rerank.load()  # refused (ModelRefused) if FEATURES changed without a refit
    assert model.coefficients.shape == (len(rerank.FEATURES),)


def test_features_place_each_candidate_against_the_best_hits() -> None:
    signals = rerank.Signals(
        words={1: 4.0, 2: 2.0},
        vector={3: 0.4},
        via={3: (1, "responds_to"), 4: (1, "responds_to, 2 turns")},
        signer={1},
        named=True,
        bodies={1: "I painted a sunrise.", 2: "Did you paint?", 3: "x" * 300},
        parents={1: 100, 2: 100, 3: 200, 4: 100},
    )
    x = rerank.features([1, 2, 3, 4], {1: 2.0, 2: 1.0, 3: 0.5, 4: 0.5}, signals)
    col = {name: x[:, i].tolist() for i, name in enumerate(rerank.FEATURES)}
    assert col["score"] == [1.0, 0.5, 0.25, 0.25]
    assert col["words"] == [1.0, 0.5, 0.0, 0.0]
    assert col["vector"] == [0.0, 0.0, 0.4, 0.0]
    assert col["neighbour"] == [0.0, 0.0, 1.0, 0.0] and col["further"] == [0.0, 0.0, 0.0, 1.0]
    assert col["signer"] == [1.0, 0.0, 0.0, 0.0] and col["other_speaker"] == [0.0, 1.0, 1.0, 1.0]
    assert col["asks"] == [0.0, 1.0, 0.0, 0.0] and col["length"][2] == 1.0
    # Three of the four share parent 100; node 4 is 2 ids from node 2, the nearest of the top 3.
    assert col["session_top"] == [0.3, 0.3, 0.1, 0.3]
    assert col["near_top"] == [0.5, 0.5, 0.0, 1 / 3]


def test_a_model_reorders_the_pool(make_note) -> None:
    statement = make_note("The heron nests by the mill.")
    question = make_note("Did the heron nest by the mill?")
    with rerank.using(_model(asks=1.0)):
        first = [p["id"] for p in recall("heron mill")]
    with rerank.using(_model(asks=-1.0)):
        second = [p["id"] for p in recall("heron mill")]
    assert first[:2] == [question.pk, statement.pk]
    assert second[:2] == [statement.pk, question.pk]


N = len(rerank.FEATURES)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"features": ["score"]}, r"fitted on features \['score'\]"),
        ({"coefficients": [1.0]}, f"expected {N} numbers"),
        ({"scale": [0.0] * N}, "scale that is not positive"),
        ({"coefficients": [float("nan")] * N}, "non-finite"),
        ({"mean": [1.0, 2.0]}, f"expected {N} numbers"),
        ({"mean": "many"}, "unreadable"),
    ],
)
def test_a_model_that_does_not_fit_is_refused_with_its_reason(tmp_path, changes, reason) -> None:
    path = tmp_path / "rerank.json"
    _write(path)
    assert rerank.load(path).coefficients.shape == (N,)  # the fixture itself is usable
    _write(path, **changes)
    with pytest.raises(rerank.ModelRefused, match=reason):
        rerank.load(path)


def test_an_unreadable_file_is_refused(tmp_path) -> None:
    path = tmp_path / "rerank.json"
    path.write_text("{not json")
    with pytest.raises(rerank.ModelRefused, match="unreadable"):
        rerank.load(path)


def test_without_a_usable_model_recall_keeps_the_fused_order(
    make_note, tmp_path, monkeypatch, caplog
) -> None:
    make_note("The heron nests by the mill.")
    make_note("Did the heron nest by the mill?")
    with rerank.using(None):
        fused = [p["id"] for p in recall("heron mill")]
    for broken in ("missing", "corrupt"):
        path = tmp_path / f"{broken}.json"
        if broken == "corrupt":
            path.write_text("[1, 2")
        monkeypatch.setattr(rerank, "MODEL_PATH", path)
        rerank.forget()
        with caplog.at_level(logging.WARNING, logger="memory.rerank"):
            assert [p["id"] for p in recall("heron mill")] == fused
        assert "recall keeps the fused order" in caplog.text
        caplog.clear()
    rerank.forget()


def test_the_setting_turns_the_reranker_off(make_note, settings) -> None:
    make_note("The heron nests by the mill.")
    make_note("Did the heron nest by the mill?")
    rerank.forget()
    assert rerank.current() is not None  # the shipped file is in use
    settings.GROVE_RERANK = False
    assert rerank.current() is None and not rerank.wanted()
    with rerank.using(None):
        fused = [p["id"] for p in recall("heron mill")]
    assert [p["id"] for p in recall("heron mill")] == fused
