"""Recall, walk and visibility behaviours that round 4's whole-module, one-child mutation run
found no test pinned (issue 16, docs/mutation.md "Round 4, engine modules"). Each test is
named for the behaviour it holds; unit level, no browser and no worker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from memory.visibility import _aware


def test_a_stored_instant_keeps_its_moment_whether_text_naive_or_in_another_zone() -> None:
    moment = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    assert _aware("2026-03-04 05:06:07") == moment
    assert _aware(datetime(2026, 3, 4, 5, 6, 7)) == moment
    east = moment.astimezone(timezone(timedelta(hours=2)))
    assert _aware(east) == moment
