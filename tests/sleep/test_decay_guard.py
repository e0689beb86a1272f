"""The guard on mass forgetting (memory/sleep/decay.py): a sleep that would let go of more than
GROVE_DECAY_GUARD_SHARE of the live graph lets go of none of it and says so; the owner's release
(memory/forgetting.py) lets the next sleep collect what was pending then, and only that."""

from __future__ import annotations

import json

import pytest

from memory.errors import Conflict
from memory.forgetting import held_back, release_held
from memory.importers.locomo import ingest
from memory.models import Event, EventKind, Node
from memory.sleep.run import run_sleep


def _conversation(path, sample_id: str, turns: int) -> None:
    speakers = ["Ana", "Ben"]
    session = [
        {"speaker": speakers[i % 2], "dia_id": f"D1:{i + 1}", "text": f"Turn {i} of {sample_id}: "
         "the heron, the garden and the weather, again and again."}
        for i in range(turns)
    ]  # fmt: skip
    sample = {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": session,
        },
        "qa": [],
    }
    path.write_text(json.dumps([sample]))
    ingest(path, tz="UTC")


@pytest.fixture
def imported(db, tmp_path, settings):
    settings.GROVE_DECAY_MIN_AGE_DAYS = 0
    settings.GROVE_DECAY_GUARD_FLOOR = 5
    _conversation(tmp_path / "locomo.json", "conv-x", 8)
    return Node.objects.filter(domain="conv-x")


def test_a_locomo_import_decays_nothing_on_the_first_sleep_and_says_why(imported):
    live = imported.filter(decayed_at__isnull=True).count()
    assert live >= 8
    run = run_sleep(requested_by="test")
    assert imported.filter(decayed_at__isnull=True).count() == live
    step = run.steps["decay"]
    assert (step["count"], step["held_back"]) == (0, step["unreachable"])
    assert step["held_back"] > 0.1 * step["live"]
    assert held_back() == {
        "count": step["held_back"], "live": step["live"], "run": run.pk,
        "share": round(step["held_back"] / step["live"], 3),
    }  # fmt: skip


def test_after_the_owner_releases_the_next_sleep_collects_it(imported):
    run_sleep(requested_by="test")
    release_held(actor="owner")
    (released,) = Event.objects.filter(kind=EventKind.DECAYS_RELEASED)
    assert released.actor == "owner" and released.detail["count"] > 0
    run = run_sleep(requested_by="test")
    assert run.steps["decay"]["count"] == released.detail["count"]
    assert not imported.filter(decayed_at__isnull=True).exists()
    assert held_back() is None


def test_nodes_arriving_after_the_release_are_still_guarded(imported, tmp_path):
    run_sleep(requested_by="test")
    release_held(actor="owner")
    _conversation(tmp_path / "later.json", "conv-y", 40)
    later = Node.objects.filter(domain="conv-y")
    run = run_sleep(requested_by="test")
    assert not imported.filter(decayed_at__isnull=True).exists()
    assert run.steps["decay"]["held_back"] == later.count()
    assert not later.filter(decayed_at__isnull=False).exists()


def test_the_floor_keeps_the_guard_quiet_on_a_tiny_graph(imported, settings):
    settings.GROVE_DECAY_GUARD_FLOOR = 1000
    run = run_sleep(requested_by="test")
    assert run.steps["decay"]["held_back"] == 0
    assert not imported.filter(decayed_at__isnull=True).exists()
    assert held_back() is None


def test_releasing_with_nothing_held_back_is_refused(db):
    with pytest.raises(Conflict):
        release_held(actor="owner")
    assert not Event.objects.filter(kind=EventKind.DECAYS_RELEASED).exists()
