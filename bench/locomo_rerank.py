"""The reranker (memory.recall.rerank) on LoCoMo dev, fitted on four conversations, scored on the
fifth.

For a fusion setting, every question is recalled once with the reranker observing: its pool
(the POOL best candidates in the fused order) and their features are kept, each candidate
labelled by whether its source is one of the question's evidence turns. Then, five times, a
logistic regression is fitted on the pools of four conversations' questions and orders the
fifth's; R@k of that order is the held-out figure. Fitted on all five, the same regression is
what `--fit` writes to memory/recall/rerank.json (the coefficients recall ships). Under an
embedder with a query form of its own (a trained model: e5) the pools also carry the reranker's
MEANING column, and `--fit` writes memory/recall/rerank-<embedder name>.json instead, the file
recall reads under that embedder (memory.recall.rerank.model_path).

    python -m bench.locomo_rerank          # held-out figures for the shipped fusion weights
    python -m bench.locomo_rerank --fit    # ... and write memory/recall/rerank.json from all five
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection

from bench.locomo import KS, Question, breakdown, grove_recall, memoised, per_question

# The regression's strength of regularisation (sklearn's C); not searched (docs/recall.md).
C = 1.0


@dataclass
class Pool:
    ids: list[int]
    x: np.ndarray
    labels: np.ndarray  # 1 for an evidence turn
    wanted: int  # evidence turns of the question (in the pool or not)


def meaning() -> bool:
    """Whether the pools carry MEANING: the embedder in use is a trained model (it has a query
    form of its own); the hashing embedder's cosines to every candidate lowered held-out R@10
    (docs/recall.md), so its reranker keeps the FEATURES alone."""
    from memory.vectors.embed import get_embedder

    return hasattr(get_embedder(), "embed_query")


def pools(qs: list[Question], setting: dict[str, Any]) -> list[Pool]:
    """Every question's pool under the fusion `setting`, the reranker off (the fused order)."""
    from memory.recall import rank, rerank

    width = len(rerank.FEATURES) + (len(rerank.MEANING) if meaning() else 0)
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, source FROM memory_node")
        source = dict(cursor.fetchall())
    found: list[Pool] = []
    for q in qs:
        seen: list[tuple[list[int], np.ndarray]] = []
        with (
            rank.using(**setting),
            rerank.using(None),
            rerank.observing(lambda ids, x, seen=seen: seen.append((ids, x)), meaning=meaning()),
        ):
            top = grove_recall(q["question"], q["sample"], max(KS))
        wanted = {f"{q['sample']}#{dia}" for dia in q["evidence"]}
        if seen:
            ids, x = seen[-1]
        else:  # no pool was ranked (nothing, or one candidate)
            ids = [i for i, s in source.items() if s in top][:1]
            x = np.zeros((len(ids), width))
        labels = np.array([1.0 if source.get(i) in wanted else 0.0 for i in ids])
        found.append(Pool(ids=ids, x=x, labels=labels, wanted=len(wanted)))
    return found


def fit(train: list[Pool]) -> Any:
    """The reranker fitted on these pools (memory.recall.rerank.Model)."""
    from sklearn.linear_model import LogisticRegression

    from memory.recall.rerank import Model

    x = np.vstack([p.x for p in train if len(p.ids)])
    y = np.concatenate([p.labels for p in train if len(p.ids)])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    regression = LogisticRegression(C=C, max_iter=2000)
    regression.fit((x - mean) / scale, y)
    return Model(mean=mean, scale=scale, coefficients=regression.coef_[0].astype(np.float64))


class _Scored:
    def __init__(self, model: Any) -> None:
        self.model = model

    def score(self, x: np.ndarray) -> np.ndarray:
        return self.model.predict_proba(x)[:, 1]


def _gbm(train: list[Pool]) -> Any:
    """A gradient-boosted comparison (bench only: recall ships the linear model)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.vstack([p.x for p in train if len(p.ids)])
    y = np.concatenate([p.labels for p in train if len(p.ids)])
    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15)
    return _Scored(model.fit(x, y))


def recall_at(pool: Pool, order: list[int]) -> tuple[float, ...]:
    return tuple(float(pool.labels[order[:k]].sum()) / pool.wanted for k in KS)


def ordered(pool: Pool, model: Any | None) -> list[int]:
    if model is None or len(pool.ids) <= 1:
        return list(range(len(pool.ids)))
    score = model.score(pool.x)
    return sorted(range(len(pool.ids)), key=lambda r: (-score[r], r))


def held_out(
    qs: list[Question], by_fold: dict[str, list[Pool]], fitter: Any = None
) -> list[tuple[float, ...]]:
    """R@k per question, each question's pool ordered by a model fitted on the other
    conversations' pools (all taken under the fusion setting chosen for its fold)."""
    rows: list[tuple[float, ...]] = [()] * len(qs)
    for sample, fold_pools in by_fold.items():
        train = [p for p, q in zip(fold_pools, qs, strict=True) if q["sample"] != sample]
        model = (fitter or fit)(train)
        for i, q in enumerate(qs):
            if q["sample"] == sample:
                rows[i] = recall_at(fold_pools[i], ordered(fold_pools[i], model))
    return rows


def reranked_held_out(
    qs: list[Question], chosen: dict[str, dict[str, Any]]
) -> list[tuple[float, ...]]:
    """held_out, each fold's pools taken under the fusion setting chosen for it (`chosen`:
    conversation -> setting); the pools of a setting are taken once."""
    taken: dict[str, list[Pool]] = {}
    by_fold = {}
    for sample, setting in chosen.items():
        key = repr(sorted(setting.items()))
        if key not in taken:
            taken[key] = pools(qs, setting)
        by_fold[sample] = taken[key]
    return held_out(qs, by_fold)


def write_model(model: Any, note: str) -> None:
    from memory.recall.rerank import FEATURES, MEANING, MODEL_PATH
    from memory.vectors.embed import get_embedder

    names = [*FEATURES, *MEANING] if model.meaning else list(FEATURES)
    path = MODEL_PATH
    if model.meaning:
        path = MODEL_PATH.with_name(f"rerank-{get_embedder().name}.json")
    data = {
        "features": names,
        "mean": [round(float(v), 6) for v in model.mean],
        "scale": [round(float(v), 6) for v in model.scale],
        "coefficients": [round(float(v), 6) for v in model.coefficients],
        "fitted": note,
    }
    # One line a key: a refit shows as a diff of numbers.
    lines = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n")


def main() -> None:
    import os
    import statistics
    from pathlib import Path

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grove.settings")
    import django

    django.setup()
    from django.conf import settings

    from bench.locomo import prepare_locomo
    from bench.synthetic import use_database
    from memory.recall import rank
    from memory.vectors.embed import get_embedder

    if os.environ.get("GROVE_RERANK_POOL"):  # a trial of another pool size
        rank.POOL = int(os.environ["GROVE_RERANK_POOL"])
    path, qs = prepare_locomo()
    samples = list(dict.fromkeys(q["sample"] for q in qs))
    with use_database(path), memoised():
        shipped = json.loads(os.environ.get("GROVE_RERANK_SETTING", "{}"))  # a trial setting
        fused = per_question(qs, grove_recall) if "--check" in sys.argv else None
        pool_list = pools(qs, shipped)
    if os.environ.get("GROVE_RERANK_DUMP"):  # experiments on the pools outside the bench
        import pickle

        Path(os.environ["GROVE_RERANK_DUMP"]).write_bytes(pickle.dumps((qs, pool_list)))
    base = [recall_at(p, ordered(p, None)) for p in pool_list]
    if fused is not None:
        assert [round(r[0], 6) for r in fused] == [round(r[0], 6) for r in base]
    held = held_out(qs, dict.fromkeys(samples, pool_list))
    named = {"fused": base, "reranked": held}
    if "--gbm" in sys.argv:
        named["gbm"] = held_out(qs, dict.fromkeys(samples, pool_list), fitter=_gbm)
    cover = [(float(p.labels.sum()) / p.wanted,) * len(KS) for p in pool_list]
    named["in pool"] = cover
    for name, rows in named.items():
        print(name, [round(statistics.fmean(r[j] for r in rows), 3) for j in range(len(KS))])
    print("\n".join(breakdown(qs, named)))
    if "--fit" in sys.argv:
        note = (
            "LoCoMo dev (locomo-dev.json): all five conversations, 760 questions, pools under "
            "the shipped fusion weights (python -m bench.locomo_rerank --fit)"
        )
        if meaning():
            note += f", embedder {get_embedder().name} (GROVE_EMBEDDER={settings.GROVE_EMBEDDER})"
        write_model(fit(pool_list), note)


if __name__ == "__main__":
    main()
