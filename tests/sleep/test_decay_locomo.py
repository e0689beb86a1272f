"""Issue 11's measurement as a test: a LoCoMo-shaped import, nothing read, age threshold 0, one
real sleep, collects everything; one agent read on one turn keeps that turn and its session."""

from __future__ import annotations

import json

import pytest

from memory.importers.locomo import ingest
from memory.models import Event, Node
from memory.read import read
from memory.sleep.run import run_sleep


def _turns(session: int, n: int) -> list[dict]:
    speakers = ["Ana", "Ben"]
    return [
        {"speaker": speakers[i % 2], "dia_id": f"D{session}:{i + 1}", "text": f"Turn {i} of "
         f"session {session}: the heron, the garden and the weather, again and again."}
        for i in range(n)
    ]  # fmt: skip


@pytest.fixture
def imported(db, tmp_path, settings):
    settings.GROVE_DECAY_MIN_AGE_DAYS = 0
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": _turns(1, 6),
            "session_2_date_time": "9:00 am on 10 June, 2023",
            "session_2": _turns(2, 5),
        },
        "qa": [],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))
    ingest(path, tz="UTC")
    assert Node.objects.filter(kind="utterance").count() == 11
    return Node.objects.filter(domain="conv-x")


def test_a_locomo_import_nobody_reads_is_collected_whole(imported):
    assert imported.filter(decayed_at__isnull=True).count() == 13
    run = run_sleep(requested_by="test")
    assert run.steps["integrity"]["count"] == 0
    assert not imported.filter(decayed_at__isnull=True).exists()
    assert set(Event.objects.filter(kind="decayed").values_list("reason", flat=True)) <= {
        "unreachable",
        "consolidated",
    }


def test_one_agent_read_keeps_that_turn_and_its_session(imported):
    turn = imported.filter(kind="utterance").order_by("id")[3]
    session = turn.out_edges.get(kind="derived_from").to_node
    read(turn.pk, actor="agent:scout", domains=["conv-x"])
    run_sleep(requested_by="test")
    live = set(imported.filter(decayed_at__isnull=True).values_list("id", flat=True))
    assert live == {turn.pk, session.pk}
