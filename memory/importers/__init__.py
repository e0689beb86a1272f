"""Importers: one module per external format, each exposing `ingest(path, *, tz, domain, actor)`.

FORMATS maps a format name to the dotted path of its ingest function; `manage.py ingest
--format NAME` dispatches through it, so adding a format is one line here plus its module.
"""

from __future__ import annotations

FORMATS: dict[str, str] = {
    "locomo": "memory.importers.locomo.ingest",
    "transcript": "memory.importers.transcript.ingest",
    "markdown": "memory.importers.markdown.ingest",
    "vault": "memory.importers.markdown.ingest",
}
