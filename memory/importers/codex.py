"""Codex CLI's sessions: ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl
($CODEX_HOME/sessions when set), one JSON object a line (memory/importers/sessions.py does the
writing).

A line is `{"timestamp", "type", "payload"}` (codex-rs's RolloutLine), read defensively:
- `session_meta` (the session's id and `cwd`) and `turn_context` (cwd, model) are bookkeeping
  that name the session and the project;
- `response_item` carries the conversation: a `message` with role user or assistant and
  `input_text`/`output_text` parts (words; role developer or system, and the harness's
  `<environment_context>`, `<user_instructions>` and AGENTS.md messages, are system reminders),
  `reasoning` (thinking, skipped), `function_call`, `custom_tool_call`, `local_shell_call` and
  `web_search_call` (a labelled line, or skipped), their `*_output` (tool results, skipped);
- `event_msg` repeats the words for the screen (user_message, agent_message) beside token
  counts and reasoning: all skipped, the words come once, from the response items;
- `compacted` and anything unknown are bookkeeping.
Older rollouts wrote the meta and the response items bare, without the envelope: read too.
Lines carry no ids of their own, so each is known by the hash of its bytes.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

from memory.importers import sessions
from memory.importers.sessions import Line, Piece, label, relative

ACTOR = "importer:codex"
_INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
)
_RESPONSE_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)
_SHELLS = frozenset({"bash", "sh", "zsh"})
_PATCHED = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)


def default_folder() -> Path:
    """Where Codex keeps its sessions on this machine."""
    return Path(os.environ.get("CODEX_HOME") or "~/.codex").expanduser() / "sessions"


def _command(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        # ["bash", "-lc", "pytest -q"]: the command is the script the shell was given.
        if len(value) == 3 and Path(value[0]).name in _SHELLS and value[1] in ("-c", "-lc"):
            return str(value[2])
        return shlex.join(value)
    return ""


def _patch(text: str, project: str | None) -> str:
    return label("edited", ", ".join(relative(p.strip(), project) for p in _PATCHED.findall(text)))


def _tool(payload: dict[str, Any], project: str | None) -> str:
    kind, name = payload.get("type"), str(payload.get("name") or "")
    if kind == "local_shell_call":
        action = payload.get("action")
        return label("ran", _command(action.get("command") if isinstance(action, dict) else None))
    if kind == "web_search_call":
        action = payload.get("action")
        query = action.get("query") if isinstance(action, dict) else None
        return label("searched the web", str(query or ""))
    raw = payload.get("arguments", payload.get("input"))
    if name == "apply_patch" or (isinstance(raw, str) and raw.startswith("*** Begin Patch")):
        return _patch(str(raw), project)
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = None
    if name in ("shell", "container.exec", "shell_command", "exec_command") and isinstance(
        args, dict
    ):
        command = _command(args.get("command", args.get("cmd")))
        if command.startswith("apply_patch"):
            return _patch(command, project)
        return label("ran", command)
    if name == "update_plan":
        return "updated the plan"
    return label("used", name or "a tool")


def _message(payload: dict[str, Any], line: Line) -> None:
    role = payload.get("role")
    content = payload.get("content")
    parts = [{"text": content}] if isinstance(content, str) else content
    if not isinstance(parts, list):
        raise ValueError("a message without content")
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    if role not in ("user", "assistant"):
        line.skipped.append("system reminders")
        return
    for text in texts:
        text = sessions.without_reminders(text, line.skipped)
        if role == "user" and text.lstrip().startswith(_INJECTED):
            line.skipped.append("system reminders")
        elif text.strip():
            line.pieces.append(Piece(role, text))


def read(record: dict[str, Any], *, tools: bool) -> Line:
    """One line of a Codex rollout as words, tool lines and skips."""
    kind, payload = record.get("type"), record.get("payload")
    if payload is None and kind in _RESPONSE_TYPES:
        kind, payload = "response_item", record  # an older rollout's bare response item
    elif payload is None and "type" not in record and "id" in record:
        kind, payload = "session_meta", record  # an older rollout's bare first line
    line = Line(time=record.get("timestamp"))
    if not isinstance(payload, dict):
        line.skipped.append("bookkeeping")
        return line
    if kind in ("session_meta", "turn_context"):
        if isinstance(payload.get("cwd"), str):
            line.project = payload["cwd"]
        if kind == "session_meta" and isinstance(payload.get("id"), str):
            line.session = payload["id"]
        line.skipped.append("bookkeeping")
        return line
    if kind == "event_msg":
        reasoning = str(payload.get("type", "")).startswith("agent_reasoning")
        line.skipped.append("thinking" if reasoning else "bookkeeping")
        return line
    if kind != "response_item":
        line.skipped.append("bookkeeping")
        return line
    item = payload.get("type")
    if item == "message":
        _message(payload, line)
    elif item == "reasoning":
        line.skipped.append("thinking")
    elif item in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        if tools:
            line.pieces.append(Piece("tool", _tool(payload, None)))
        else:
            line.skipped.append("tool calls")
    elif item in ("function_call_output", "custom_tool_call_output"):
        line.skipped.append("tool results")
    else:
        line.skipped.append("bookkeeping")
    return line


FORMAT = sessions.Format(name="codex", agent="codex", title="Codex", read=read)


def ingest(
    path: str | Path,
    *,
    tz: str | None = None,
    domain: str | None = None,
    tools: str = "lines",
    actor: str = ACTOR,
) -> sessions.SessionSummary:
    """Import Codex sessions (a rollout file, or a folder such as ~/.codex/sessions); see
    memory/importers/sessions.py. `tz` is accepted for the command's sake: every line's time
    carries its offset."""
    return sessions.ingest(path, FORMAT, domain=domain, tools=tools, actor=actor)
