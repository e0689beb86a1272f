"""The bench's held-out reranker (bench.locomo_rerank): a conversation's questions are ordered
by a model fitted without them, and R@k counts evidence the pool never held."""

from __future__ import annotations

import numpy as np

from bench.locomo_rerank import KS, Pool, fit, held_out, ordered
from memory.recall import rerank


def _pool(evidence_asks: bool = False, wanted: int = 1) -> Pool:
    # Two candidates, the evidence second in the fused order; it asks or the other one does.
    x = np.zeros((2, len(rerank.FEATURES)))
    x[:, rerank.FEATURES.index("asks")] = [0.0, 1.0] if evidence_asks else [1.0, 0.0]
    return Pool(ids=[1, 2], x=x, labels=np.array([0.0, 1.0]), wanted=wanted)


def test_the_bench_and_quality_agree_on_ks() -> None:
    from bench import locomo_quality

    assert KS == locomo_quality.KS


def test_each_fold_is_ordered_by_a_model_fitted_without_it() -> None:
    qs = [{"sample": s, "question": "q", "evidence": ["D1:1"], "category": 4} for s in "aabb"]
    pools = [_pool(), _pool(), _pool(), _pool(wanted=2)]
    fitted_on: list[list[int]] = []
    models = []

    def fitter(train: list[Pool]):
        fitted_on.append([next(i for i, p in enumerate(pools) if p is t) for t in train])
        models.append(fit(train))
        return models[-1]

    rows = held_out(qs, dict.fromkeys("ab", pools), fitter=fitter)
    assert fitted_on == [[2, 3], [0, 1]]  # fold a fitted on b's pools, and b on a's
    # The evidence sits second in the fused order; each fold's model puts it first.
    assert ordered(pools[0], None) == [0, 1]
    assert all(ordered(pools[0], m) == [1, 0] for m in models)
    assert rows[0] == (1.0,) * len(KS)
    # The fourth question has two evidence turns and only one in its pool: R@k is at most 1/2.
    assert rows[3] == (0.5,) * len(KS)


def test_a_model_fitted_on_the_opposite_lesson_misorders_the_held_out_fold() -> None:
    model = fit([_pool(evidence_asks=True), _pool(evidence_asks=True)])
    held = _pool(evidence_asks=False)
    assert ordered(held, model) == [0, 1]  # it prefers the candidate that asks: not evidence
    assert ordered(held, fit([held, held])) == [1, 0]
