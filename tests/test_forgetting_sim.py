"""A short run of the forgetting simulator (bench/forgetting_bench.py): the sweep collects, and
no protected node (read, rooted, proposed, sealed, permanent, young, kept or held) ever decays."""

from __future__ import annotations

from bench.forgetting_bench import simulate
from memory.models import Event, SleepRun


def test_no_protected_node_is_ever_decayed_on_a_short_run(transactional_db):
    months = simulate("reach 3 d", days=12, scale=0.1, path=None)
    assert sum(m.needs for m in months) > 0
    assert Event.objects.filter(kind="decayed", reason="unreachable").exists()
    assert [m.protected_decayed for m in months] == [0] * len(months)
    runs = list(SleepRun.objects.values_list("steps", flat=True))
    assert len(runs) == 12
    assert all(steps["integrity"]["count"] == 0 for steps in runs)
