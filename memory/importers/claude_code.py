"""Claude Code's sessions: ~/.claude/projects/<project>/<session>.jsonl ($CLAUDE_CONFIG_DIR/projects
when set), one JSON object a line (memory/importers/sessions.py does the writing).

No schema is published; this follows the lines as the files and the public notes on them show
them, and reads defensively (an unknown type is bookkeeping, a missing field is no field):
- `user` and `assistant` lines carry `message.content`, a string or a list of blocks: `text`
  (words), `thinking`/`redacted_thinking` (skipped), `tool_use` (a labelled line, or skipped),
  `tool_result` (skipped: the tool's output, not anyone's words), `image` (skipped). Each line has
  its own `uuid` (its key), a `timestamp`, `cwd` (the project) and `sessionId`.
- `isSidechain` lines are a subagent talking to itself (also whole `agent-*.jsonl` files):
  skipped and counted; the main session keeps the subagent's answer as its tool result.
- `isMeta` lines, the summary a compaction writes as a user line (`isCompactSummary`), lines
  shown in its transcript view only (`isVisibleInTranscriptOnly`), slash-command echoes and
  interruptions are bookkeeping; `<system-reminder>` blocks inside a turn are cut out and
  counted; hook output (a hook's line or block) is skipped.
- `summary`, `file-history-snapshot`, `system`, `queue-operation`, `progress` and any other
  type are bookkeeping.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memory.importers import sessions
from memory.importers.sessions import Line, Piece, label, relative

ACTOR = "importer:claude-code"
_COMMANDS = ("<command-name>", "<command-message>", "<command-args>", "<local-command-std")
_INTERRUPTED = "[Request interrupted by user"
_HOOKS = ("<user-prompt-submit-hook>",)
# Lines the harness writes as if said: its own notes, a compaction's summary, and lines shown in
# Claude Code's transcript view only (never sent to the model).
_NOT_SAID = ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")


def default_folder() -> Path:
    """Where Claude Code keeps its sessions on this machine."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude"
    return Path(base).expanduser() / "projects"


def _hooky(record: dict[str, Any]) -> bool:
    parts = [record.get("subtype"), record.get("hookEvent")]
    for nested in ("attachment", "data"):
        if isinstance(record.get(nested), dict):
            parts.append(record[nested].get("type"))
    return any("hook" in str(part).lower() for part in parts if part)


def _tool(block: dict[str, Any], project: str | None) -> str:
    name = str(block.get("name") or "a tool")
    given = block.get("input")
    args: dict[str, Any] = given if isinstance(given, dict) else {}

    def arg(*names: str) -> str:
        return next((str(args[n]) for n in names if args.get(n)), "")

    path = relative(arg("file_path", "notebook_path", "path"), project)
    if name == "Bash":
        return label("ran", arg("command"))
    if name in ("Edit", "MultiEdit", "NotebookEdit"):
        return label("edited", path)
    if name == "Write":
        return label("wrote", path)
    if name == "Read":
        return label("read", path)
    if name in ("Grep", "Glob"):
        return label("searched", arg("pattern") + (f" in {path}" if path else ""))
    if name == "WebFetch":
        return label("fetched", arg("url"))
    if name == "WebSearch":
        return label("searched the web", arg("query"))
    if name in ("Task", "Agent"):
        return label("asked a subagent", arg("description", "prompt"))
    if name == "TodoWrite":
        return "updated the todo list"
    return label("used", name)


def _text(text: str, line: Line) -> str:
    text = sessions.without_reminders(text, line.skipped)
    stripped = text.strip()
    if stripped.startswith(_COMMANDS) or stripped.startswith(_INTERRUPTED):
        line.skipped.append("bookkeeping")
        return ""
    if stripped.startswith(_HOOKS):
        line.skipped.append("hook output")
        return ""
    return text


def read(record: dict[str, Any], *, tools: bool) -> Line:
    """One line of a Claude Code session as words, tool lines and skips."""
    kind = record.get("type")
    uuid = record.get("uuid")
    line = Line(
        key=uuid if isinstance(uuid, str) and uuid else None,
        time=record.get("timestamp"),
        session=record.get("sessionId") if isinstance(record.get("sessionId"), str) else None,
        project=record.get("cwd") if isinstance(record.get("cwd"), str) else None,
    )
    if kind not in ("user", "assistant"):
        line.skipped.append("hook output" if _hooky(record) else "bookkeeping")
        return line
    if record.get("isSidechain") is True:
        line.skipped.append("sidechain")
        return line
    if any(record.get(flag) is True for flag in _NOT_SAID):
        line.skipped.append("bookkeeping")
        return line
    message = record.get("message")
    if not isinstance(message, dict):
        raise ValueError("a user or assistant line without its message")
    model = message.get("model")
    line.model = (
        f"claude-code ({model})" if isinstance(model, str) and model[:1].isalpha() else None
    )
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        raise ValueError("message.content is neither text nor a list of blocks")
    for block in blocks:
        kind_of = block.get("type") if isinstance(block, dict) else None
        if kind_of == "text" and isinstance(block.get("text"), str):
            if text := _text(block["text"], line):
                line.pieces.append(Piece(str(kind), text))
        elif kind_of in ("thinking", "redacted_thinking"):
            line.skipped.append("thinking")
        elif kind_of == "tool_use" and isinstance(block, dict):
            if tools:
                line.pieces.append(Piece("tool", _tool(block, line.project)))
            else:
                line.skipped.append("tool calls")
        elif kind_of == "tool_result":
            line.skipped.append("tool results")
        else:
            line.skipped.append("other blocks")
    return line


FORMAT = sessions.Format(name="claude-code", agent="claude-code", title="Claude Code", read=read)


def ingest(
    path: str | Path,
    *,
    tz: str | None = None,
    domain: str | None = None,
    tools: str = "lines",
    actor: str = ACTOR,
) -> sessions.SessionSummary:
    """Import Claude Code sessions (a file, or a folder such as ~/.claude/projects); see
    memory/importers/sessions.py. `tz` is accepted for the command's sake: every line's time
    carries its offset."""
    return sessions.ingest(path, FORMAT, domain=domain, tools=tools, actor=actor)
