"""A short run of the forgetting simulator (bench/forgetting_bench.py): the sweep collects, and
no protected node (read, rooted, proposed, sealed, permanent, young, kept or held) ever decays."""

from __future__ import annotations

import pytest

from bench.forgetting_bench import simulate
from memory.models import Event, SleepRun


def test_no_protected_node_is_ever_decayed_on_a_short_run(transactional_db):
    months = simulate("reach 3 d", days=12, scale=0.1, path=None)
    assert sum(m.needs for m in months) > 0
    assert Event.objects.filter(kind="decayed", reason="unreachable").exists()
    assert [m.protected_decayed for m in months] == [0] * len(months)
    assert [m.integrity for m in months] == [0] * len(months)  # every check, at month ends
    runs = list(SleepRun.objects.values_list("steps", flat=True))
    assert len(runs) == 12
    assert all(steps["integrity"]["count"] == 0 for steps in runs)


def _outcome(months: list) -> list[tuple[int, ...]]:
    return [(m.arrived, m.live, m.decayed, m.permanent, m.regret, m.hits, m.needs) for m in months]


@pytest.mark.sqlite_only  # the day-N snapshot is a copy of the simulated SQLite file
def test_a_threshold_resumed_from_keep_everythings_snapshot_equals_a_run_from_day_0(
    transactional_db, tmp_path
):
    # "reach N d" starts from keep-everything's day-N snapshot in the bench: nothing is N days
    # old before then, so both must give the same months as a run from day 0.
    fork = tmp_path / "day-3.sqlite3"
    keep = simulate("keep everything", days=7, scale=0.3, path=tmp_path / "keep.sqlite3",
                    snapshots={3: fork})  # fmt: skip
    resumed = simulate("reach 3 d", days=7, scale=0.3, path=tmp_path / "r.sqlite3", resume=fork)
    fresh = simulate("reach 3 d", days=7, scale=0.3, path=tmp_path / "f.sqlite3")
    assert fork.exists()
    assert sum(m.decayed for m in fresh) > 0  # the threshold collected after the fork
    assert _outcome(resumed) == _outcome(fresh)
    assert _outcome(resumed) != _outcome(keep)
    # each database has its own chain-anchor file, copied with the snapshot: all checks pass
    assert [m.integrity for m in [*keep, *resumed, *fresh]] == [0] * (3 * len(keep))


def test_the_default_is_the_best_recall_under_the_live_bound_and_ties_go_to_remembering():
    from bench.forgetting_bench import Month, summary

    def year(live: int, hits: int) -> list[Month]:
        return [Month(arrived=100, needs=100, hits=hits, live=live) for _ in range(12)]

    results = {
        "keep everything": year(1200, 90),
        "reach 90 d": year(500, 92),
        "reach 150 d": year(700, 92),  # ties with 90 d: the longer threshold wins
        "reach 180 d": year(800, 95),  # best recall, but 67% live: over the bound
    }
    text = "\n".join(summary(results))
    assert "**Default threshold: reach 150 d.** At it forgetting pays for itself" in text
    results["reach 150 d"] = year(700, 80)
    assert "**Default threshold: reach 90 d.**" in "\n".join(summary(results))


def test_the_agents_dig_finds_what_the_sweep_collected_and_brings_it_back(transactional_db):
    months = simulate("reach 3 d + dig", days=12, scale=0.3, path=None)
    assert sum(m.dug for m in months) > 0
    assert sum(m.queries for m in months) > sum(m.needs for m in months)
    assert Event.objects.filter(kind="revived", reason="dug_and_read").count() >= sum(
        m.dug for m in months
    )
    assert [m.protected_decayed for m in months] == [0] * len(months)


@pytest.mark.sqlite_only  # the forks resume from copies of the simulated SQLite file
def test_forks_run_beside_keep_everything_give_the_months_of_runs_from_day_0(
    transactional_db, tmp_path
):
    from bench.forgetting_bench import arms

    def outcome(months: list) -> list[tuple[int, ...]]:
        return [(*o, m.queries, m.dug) for o, m in zip(_outcome(months), months, strict=True)]

    policies = ["keep everything", "reach 3 d", "reach 3 d + dig"]
    together, _ = arms(policies, days=7, scale=0.3, nightly=True, out=tmp_path)
    assert list(together) == policies
    for policy in policies:
        alone = simulate(policy, days=7, scale=0.3, path=tmp_path / f"{policy[-3:]}.sqlite3")
        assert outcome(together[policy]) == outcome(alone)
