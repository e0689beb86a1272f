"""Sleep's mark, sweep and promotion, and the walk: behaviours the mutation runs of issue 16
found untested (docs/mutation.md, round 3). Each test is named for the behaviour it pins."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memory.sleep.decay import let_go, restore
from memory.sleep.reach import candidates
from tests.test_decay import lone  # noqa: F401  (a fixture)


def test_candidates_are_the_old_unread_nodes_no_event_holds(lone):  # noqa: F811
    old = sorted(lone(f"Old page {i}.", days_old=40).pk for i in range(3))
    restored = lone("Old, let go and restored by the owner.", days_old=40)
    let_go(restored.pk, actor="owner")
    restore(restored.pk, actor="owner")
    lone("Young page.", days_old=1)
    assert candidates(timezone.now() - timedelta(days=14)).tolist() == old
