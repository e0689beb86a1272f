"""Importers: one module per external format, each exposing `ingest(path, *, tz, domain, actor)`.

FORMATS maps a format name to the dotted path of its ingest function; `manage.py ingest
--format NAME` dispatches through it, so adding a format is one line here plus its module.
SESSION_FORMATS are the coding agents' session files (memory/importers/sessions.py), which also
take `tools` and are what watch scans.
"""

from __future__ import annotations

FORMATS: dict[str, str] = {
    "claude-code": "memory.importers.claude_code.ingest",
    "codex": "memory.importers.codex.ingest",
    "locomo": "memory.importers.locomo.ingest",
    "transcript": "memory.importers.transcript.ingest",
    "markdown": "memory.importers.markdown.ingest",
    "vault": "memory.importers.markdown.ingest",
}

SESSION_FORMATS: dict[str, str] = {
    "claude-code": "memory.importers.claude_code.FORMAT",
    "codex": "memory.importers.codex.FORMAT",
}
