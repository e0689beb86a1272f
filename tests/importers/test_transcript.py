from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory.importers.transcript import ingest
from memory.models import Edge, Node

MESSAGES = [
    {"role": "system", "content": "You are helpful.", "time": "2024-05-08T09:00:00Z"},
    {"role": "user", "content": "When is the boiler serviced?", "time": "2024-05-08T09:01:00Z"},
    {"role": "assistant", "content": "In March, every year.", "time": "2024-05-08T09:01:05Z"},
    {"role": "user", "content": [{"type": "text", "text": "Thanks!"}], "time": None},
]


def _write(path: Path, messages, *, jsonl: bool = False) -> Path:
    if jsonl:
        path.write_text("\n".join(json.dumps(m) for m in messages) + "\n")
    else:
        path.write_text(json.dumps(messages))
    return path


def _utterances(path: Path):
    return Node.objects.filter(kind="utterance", source=str(path)).order_by("id")


def test_it_imports_messages_as_wild_utterances_of_one_import(db, tmp_path):
    path = _write(tmp_path / "chat.json", MESSAGES)
    out = StringIO()
    call_command("ingest", str(path), "--format", "transcript", stdout=out)
    imported = Node.objects.get(kind="import", source=str(path))
    said = list(_utterances(path))
    assert [u.body for u in said] == [
        "When is the boiler serviced?",
        "In March, every year.",
        "Thanks!",
    ]
    assert {u.jurisdiction for u in said} == {"wild"}
    assert all(Edge.objects.filter(from_node=u, to_node=imported).exists() for u in said)
    assert said[1].referent_time.isoformat() == "2024-05-08T09:01:05+00:00"
    assert "1 skipped" in out.getvalue()  # the system message is scaffolding


def test_each_message_responds_to_the_one_before(db, tmp_path):
    path = _write(tmp_path / "chat.jsonl", MESSAGES, jsonl=True)
    ingest(path)
    first, second, third = _utterances(path)
    assert Edge.objects.filter(from_node=second, to_node=first, kind="responds_to").exists()
    assert Edge.objects.filter(from_node=third, to_node=second, kind="responds_to").exists()
    assert not Edge.objects.filter(from_node=first, kind="responds_to").exists()


def test_importing_the_same_transcript_twice_adds_nothing(db, tmp_path, counts):
    path = _write(tmp_path / "chat.json", MESSAGES)
    ingest(path)
    before = counts()
    summary = ingest(path)
    assert counts() == before
    assert (summary.files_unchanged, summary.nodes_created) == (1, 0)


def test_a_grown_transcript_adds_only_the_new_messages(db, tmp_path):
    path = _write(tmp_path / "chat.json", MESSAGES)
    ingest(path)
    last = _utterances(path).last()
    more = [*MESSAGES, {"role": "assistant", "content": "You're welcome.", "time": None}]
    _write(path, more)
    summary = ingest(path)
    assert (summary.files_changed, summary.messages_new, summary.messages_existing) == (1, 1, 3)
    newest = _utterances(path).last()
    assert newest.body == "You're welcome."
    assert Edge.objects.filter(from_node=newest, to_node=last, kind="responds_to").exists()
    assert Node.objects.filter(kind="import", source=str(path)).count() == 2


def test_it_refuses_a_naive_time_and_stores_nothing(db, tmp_path, counts):
    naive = [{"role": "user", "content": "Hello", "time": "2024-05-08T09:00:00"}]
    path = _write(tmp_path / "chat.json", naive)
    before = counts()
    with pytest.raises(CommandError, match="no time zone offset"):
        call_command("ingest", str(path), "--format", "transcript", stdout=StringIO())
    assert counts() == before


def test_a_naive_time_is_read_in_the_zone_the_owner_names(db, tmp_path):
    naive = [{"role": "user", "content": "Hello", "time": "2024-05-08T09:00:00"}]
    path = _write(tmp_path / "chat.json", naive)
    ingest(path, tz="Europe/Lisbon")
    assert _utterances(path).get().referent_time.isoformat() == "2024-05-08T08:00:00+00:00"


def test_it_refuses_a_message_without_a_role(db, tmp_path, counts):
    path = _write(tmp_path / "chat.json", [{"content": "who said this?"}])
    before = counts()
    with pytest.raises(CommandError, match="needs a role"):
        call_command("ingest", str(path), "--format", "transcript", stdout=StringIO())
    assert counts() == before


def test_a_folder_imports_each_transcript_and_reports_the_bad_one(db, tmp_path):
    _write(tmp_path / "a.json", MESSAGES)
    (tmp_path / "b.jsonl").write_text("{not json\n")
    summary = ingest(tmp_path)
    assert (summary.files_new, summary.files_failed) == (1, 1)
    assert "b.jsonl: bad_json" in str(summary)
