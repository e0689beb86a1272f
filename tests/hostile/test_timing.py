"""The hostile suite, timing: a sealed, a decayed and a missing id answer their 404 in the same
time within noise. The query sequences are pinned exactly in tests/agents/test_by_id_refusals.py;
this is the statistical check on top: many interleaved samples, medians, a generous bound."""

from __future__ import annotations

import statistics
import time

from memory.sleep.decay import decay
from review.ceremony import seal
from tests._helpers.agents import make_agent

ROUNDS = 134  # each round asks for all three ids in a rotating order: 402 requests
BOUND = 1.3


def test_sealed_decayed_and_missing_ids_answer_in_the_same_time(client, make_note, stale_note):
    sealed = make_note("A sealed word.")
    seal(sealed.pk, owner="owner")
    decay()
    stale_note.refresh_from_db()
    assert stale_note.decayed_at is not None
    ids = {"sealed": sealed.pk, "decayed": stale_note.pk, "missing": stale_note.pk + 1000}
    agent = make_agent(client, name="w", domains=("personal",))
    agent.get("nodes/1")
    names = list(ids)
    took: dict[str, list[float]] = {name: [] for name in names}
    for i in range(ROUNDS):
        for name in names[i % 3 :] + names[: i % 3]:
            start = time.perf_counter()
            status = agent.get(f"nodes/{ids[name]}").status_code
            took[name].append(time.perf_counter() - start)
            assert status == 404
    medians = {name: statistics.median(samples) for name, samples in took.items()}
    assert max(medians.values()) / min(medians.values()) < BOUND, medians
