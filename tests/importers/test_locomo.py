from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from memory.errors import Invalid
from memory.importers import FORMATS
from memory.importers.locomo import ingest
from memory.models import Edge, Node

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a heron!"},
            {
                "speaker": "Ben",
                "dia_id": "D1:2",
                "text": "Wow, show me.",
                "blip_caption": "a grey bird on a post",
            },
        ],
        "session_2_date_time": "9:00 am on 10 June, 2023",
        "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "How is the heron?"}],
    },
    "qa": [],
}


@pytest.fixture
def locomo_file(tmp_path):
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([SAMPLE]))
    return path


def test_it_writes_sessions_and_turns_into_the_samples_domain(db, locomo_file):
    summary = ingest(locomo_file, tz="Europe/Lisbon")
    assert (summary.samples, summary.sessions, summary.turns) == (1, 2, 3)
    turn = Node.objects.get(source="conv-x#D1:2")
    assert (turn.kind, turn.jurisdiction, turn.signature, turn.domain) == (
        "utterance",
        "wild",
        "Ben",
        "conv-x",
    )
    assert turn.body == "Wow, show me. [shares a photo: a grey bird on a post]"
    # 13:56 in Lisbon (WEST, +01:00) is 12:56 UTC.
    assert turn.referent_time == datetime(2023, 5, 8, 12, 56, tzinfo=UTC)
    session = Node.objects.get(source="conv-x#session_1")
    assert session.kind == "import" and session.jurisdiction == "wild"


def test_each_turn_derives_from_its_session_and_responds_to_the_previous(db, locomo_file):
    ingest(locomo_file, tz="UTC")
    first, second = (Node.objects.get(source=f"conv-x#D1:{n}") for n in (1, 2))
    session = Node.objects.get(source="conv-x#session_1")
    assert set(Edge.objects.filter(from_node=second).values_list("kind", "to_node")) == {
        ("derived_from", session.pk),
        ("responds_to", first.pk),
    }
    opener = Node.objects.get(source="conv-x#D2:1")
    assert not Edge.objects.filter(from_node=opener, kind="responds_to").exists()


def test_a_date_without_a_zone_and_no_tz_is_refused_and_nothing_stored(db, locomo_file, counts):
    before = counts()
    with pytest.raises(Invalid, match="no time zone"):
        ingest(locomo_file)
    assert counts() == before


def test_ingesting_twice_skips_the_sample(db, locomo_file):
    ingest(locomo_file, tz="UTC")
    again = ingest(locomo_file, tz="UTC")
    assert again.skipped == ["conv-x"] and Node.objects.count() == 5


def test_the_command_dispatches_on_format(db, locomo_file):
    assert FORMATS["locomo"] == "memory.importers.locomo.ingest"
    call_command("ingest", str(locomo_file), "--format", "locomo", "--tz", "UTC")
    assert Node.objects.filter(domain="conv-x", kind="utterance").count() == 3
    with pytest.raises(CommandError, match="no time zone"):
        call_command("ingest", str(locomo_file), "--format", "locomo", "--domain", "other")


def test_the_command_refuses_a_file_that_is_not_locomo(db, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(CommandError, match="not LoCoMo"):
        call_command("ingest", str(bad), "--format", "locomo", "--tz", "UTC")
