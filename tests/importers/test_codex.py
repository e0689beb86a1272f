"""Codex rollout files, written here in the shapes codex-rs records (see the importer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.importers.codex import ingest
from memory.models import Node, SessionFile

CWD = "/home/ada/code/boiler"


def _at(second: int) -> str:
    return f"2025-12-08T00:{second // 60:02d}:{second % 60:02d}.102Z"


def _item(second: int, payload: dict, kind: str = "response_item") -> dict:
    return {"timestamp": _at(second), "type": kind, "payload": payload}


def _said(second: int, role: str, text: str) -> dict:
    part = "input_text" if role == "user" else "output_text"
    return _item(
        second, {"type": "message", "role": role, "content": [{"type": part, "text": text}]}
    )


ROLLOUT = [
    _item(
        0,
        {
            "id": "0199-abc",
            "timestamp": _at(0),
            "cwd": CWD,
            "originator": "codex_cli_rs",
            "cli_version": "0.77.0",
        },
        "session_meta",
    ),
    _said(
        1,
        "user",
        "<environment_context>\n  <cwd>/home/ada/code/boiler</cwd>\n</environment_context>",
    ),
    _item(
        1,
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "Be brief."}],
        },
    ),
    _said(2, "user", "When is the boiler serviced?"),
    _item(
        2,
        {"type": "user_message", "message": "When is the boiler serviced?", "images": []},
        "event_msg",
    ),
    _item(3, {"cwd": CWD, "approval_policy": "on-request", "model": "gpt-5-codex"}, "turn_context"),
    _item(
        4,
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "**Looking**"}],
            "encrypted_content": "gAAA",
        },
    ),
    _item(4, {"type": "agent_reasoning", "text": "**Looking**"}, "event_msg"),
    _item(
        5,
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["bash", "-lc", "grep -r boiler notes/"]}),
            "call_id": "call_1",
        },
    ),
    _item(
        6,
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": "notes/house.md: boiler: March",
        },
    ),
    _item(
        7,
        {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "call_id": "call_2",
            "input": "*** Begin Patch\n*** Update File: notes/house.md\n@@\n-a\n+b\n*** End Patch",
        },
    ),
    _item(8, {"type": "custom_tool_call_output", "call_id": "call_2", "output": "Success."}),
    _said(9, "assistant", "In March, every year."),
    _item(9, {"type": "agent_message", "message": "In March, every year."}, "event_msg"),
    _item(
        10, {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 9}}}, "event_msg"
    ),
]


def _write(path: Path, lines: list, *, tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + tail)
    return path


def _turns(path: Path) -> list[str]:
    rows = Node.objects.filter(kind="utterance", source=str(path)).order_by("id")
    return list(rows.values_list("body", flat=True))


@pytest.fixture
def rollout(tmp_path) -> Path:
    return _write(
        tmp_path / "sessions" / "2025" / "12" / "08" / "rollout-2025-12-08T00-00-00-0199-abc.jsonl",
        ROLLOUT,
    )


def test_it_imports_the_words_once_and_tool_calls_as_labelled_lines(db, rollout):
    summary = ingest(rollout)
    assert _turns(rollout) == [
        "When is the boiler serviced?",
        "ran: grep -r boiler notes/",
        "edited: notes/house.md",
        "In March, every year.",
    ]
    imported = Node.objects.get(kind="import", source=str(rollout))
    assert imported.metadata == {"format": "codex", "session": "0199-abc", "project": CWD}
    assert imported.domain == "boiler"
    assert (summary.turns_new, summary.tool_lines) == (2, 2)


def test_it_skips_and_counts_reminders_reasoning_results_and_bookkeeping(db, rollout):
    summary = ingest(rollout)
    assert summary.skipped == {
        "system reminders": 2,  # the environment context, the developer message
        "thinking": 2,  # the reasoning item and its event
        "tool results": 2,
        "bookkeeping": 5,  # meta, turn context, the two words' events, token count
    }


def test_a_grown_rollout_adds_only_its_new_turns(db, rollout):
    ingest(rollout)
    with rollout.open("a") as handle:
        handle.write(json.dumps(_said(70, "user", "And the radiators?")) + "\n")
    summary = ingest(rollout)
    assert (summary.files_grown, summary.turns_new, summary.nodes_created) == (1, 1, 1)
    assert _turns(rollout)[-1] == "And the radiators?"


def test_read_again_from_its_start_a_rollout_adds_nothing_by_its_lines_hashes(db, rollout, counts):
    ingest(rollout)
    SessionFile.objects.all().delete()
    before = counts()
    summary = ingest(rollout)
    assert counts()["nodes"] == before["nodes"]
    assert summary.turns_existing == 4


def test_a_truncated_last_line_is_left_for_the_next_read(db, rollout):
    _write(rollout, ROLLOUT, tail=json.dumps(_said(80, "user", "half"))[:30])
    summary = ingest(rollout)
    assert summary.waiting == 1 and not summary.malformed
    assert SessionFile.objects.get(path=str(rollout)).offset < rollout.stat().st_size


def test_an_older_rollout_without_the_envelope_is_read_too(db, tmp_path):
    bare = [
        {"id": "0188-old", "timestamp": "2025-08-01T10:00:00.000Z", "instructions": None},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Old words."}],
        },
        {"record_type": "state"},
    ]
    path = _write(tmp_path / "rollout-old.jsonl", bare)
    summary = ingest(path)
    assert _turns(path) == ["Old words."]
    assert summary.skipped == {"bookkeeping": 2}


def test_a_turn_the_write_path_would_refuse_is_refused_alone(db, rollout):
    with rollout.open("a") as handle:
        handle.write(json.dumps(_said(90, "user", "half \ud800 a pair")) + "\n")
        handle.write(json.dumps(_said(91, "user", "After it.")) + "\n")
    summary = ingest(rollout)
    assert summary.malformed == [
        f"{rollout.name} line 16: text holds a lone surrogate; refused alone"
    ]
    assert _turns(rollout)[-1] == "After it."
