"""Fusion settings chosen WITH the reranker in the loop, on held-out folds (LoCoMo dev).

bench/locomo_quality.py chooses the fusion weights with the reranker off and fits the reranker
after; a weight that only feeds the reranker's pool (the vector list's, the second step's) is
then chosen for the fused order, which the reranker no longer keeps. Here every setting's pools
are taken once (bench/locomo_rerank.py), and for each held-out conversation the setting is
chosen by an inner leave-one-conversation-out on the other four (a reranker fitted on three,
scored on the fourth), then the reranker is fitted on all four under it and scored on the
held-out one. Nothing of the scored conversation enters the choice or the fit.

    GROVE_NESTED_ARMS='[{}, {"vector": 0.3}]' python -m bench.locomo_nested

Printed: each setting's plain held-out figures (fitted on four, scored on the fifth, the same
setting in every fold), then the nested choice per fold and its figures.
"""

from __future__ import annotations

import json
import os
import statistics
from typing import Any

from bench.locomo import Question
from bench.locomo_rerank import Pool, fit, ordered, recall_at


def _rows(
    qs: list[Question], pools: list[Pool], train: set[str], test: set[str]
) -> list[tuple[int, tuple[float, ...]]]:
    model = fit([p for p, q in zip(pools, qs, strict=True) if q["sample"] in train])
    return [
        (i, recall_at(pools[i], ordered(pools[i], model)))
        for i, q in enumerate(qs)
        if q["sample"] in test
    ]


def _mean10(rows: list[tuple[int, tuple[float, ...]]]) -> float:
    return statistics.fmean(r[1] for _, r in rows)


def nested(
    qs: list[Question], arms: list[list[Pool]]
) -> tuple[list[tuple[float, ...]], dict[str, int]]:
    """R@k per question under the arm chosen without its conversation, and the choice per
    conversation (index into `arms`; ties to the earlier arm)."""
    samples = list(dict.fromkeys(q["sample"] for q in qs))
    held: list[tuple[float, ...]] = [()] * len(qs)
    chosen: dict[str, int] = {}
    for sample in samples:
        rest = [s for s in samples if s != sample]

        def inner(a: int, rest: list[str] = rest) -> float:
            return statistics.fmean(_mean10(_rows(qs, arms[a], set(rest) - {s}, {s})) for s in rest)

        best = max(range(len(arms)), key=lambda a: (inner(a), -a))
        chosen[sample] = best
        for i, r in _rows(qs, arms[best], set(rest), {sample}):
            held[i] = r
    return held, chosen


def report(name: str, qs: list[Question], rows: list[tuple[float, ...]]) -> str:
    samples = list(dict.fromkeys(q["sample"] for q in qs))
    folds = [
        statistics.fmean(r[1] for r, q in zip(rows, qs, strict=True) if q["sample"] == s)
        for s in samples
    ]

    def of(test: Any) -> float:
        return statistics.fmean(r[1] for r, q in zip(rows, qs, strict=True) if test(q))

    return (
        f"{name}: R@10 {statistics.fmean(folds):.3f} (folds "
        + ", ".join(f"{f:.3f}" for f in folds)
        + f"); multi-evidence {of(lambda q: len(q['evidence']) > 1):.3f}; multi-hop "
        f"{of(lambda q: q['category'] == 1):.3f}; open-domain "
        f"{of(lambda q: q['category'] == 3):.3f}"
        f"; R@5 {statistics.fmean(r[0] for r in rows):.3f}; R@20 "
        f"{statistics.fmean(r[2] for r in rows):.3f}"
    )


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grove.settings")
    import django

    django.setup()
    from bench.locomo import prepare_locomo
    from bench.locomo_rerank import held_out, pools
    from bench.synthetic import use_database

    settings_ = json.loads(os.environ.get("GROVE_NESTED_ARMS", "[{}]"))
    path, qs = prepare_locomo()
    samples = list(dict.fromkeys(q["sample"] for q in qs))
    arms = []
    with use_database(path):
        from bench.locomo import memoised

        with memoised():
            for setting in settings_:
                arms.append(pools(qs, setting))
                rows = held_out(qs, dict.fromkeys(samples, arms[-1]))
                print(report(json.dumps(setting), qs, rows), flush=True)
    held, chosen = nested(qs, arms)
    print(report("nested choice", qs, held))
    for sample, a in chosen.items():
        print(f"- {sample}: {json.dumps(settings_[a])}")


if __name__ == "__main__":
    main()
