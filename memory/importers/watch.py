"""Watching the coding agents' session folders: a timed scan, by the worker or `manage.py watch`.

GROVE_WATCH names the folders ("claude-code:~/.claude/projects,codex:~/.codex/sessions"), each
optionally with the domain its sessions go to ("claude-code@work:~/.claude/projects"; without
one, each session goes to its project's label, as `ingest` does). A
scan lists every .jsonl under each, passes over a file whose size and mtime are what its cursor
(SessionFile) recorded, and hands the others to the session importer with the same rules as
`manage.py ingest` (memory/importers/sessions.py: only new lines, one transaction a file). Each
scan is a WatchScan row: what it saw and what it brought, for the overview and the sleep page.

Why a timed scan rather than file events (watchdog, watchfiles): events are faster (watchdog
sees an append in under a millisecond; docs/bench/watch.md), but a scan every few minutes costs
one stat per file (10,000 unchanged session files: about 1 s on a loaded machine, 0.6% of a core
at 180 s), catches what changed while Grove was down, and runs as a django-q2 task with no
long-lived watcher. Events would need a process alive whenever the agent writes, inotify watch
limits, a debounce for bursts of appends, and a scan at start-up anyway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string

from memory.errors import GroveError, Invalid
from memory.importers import SESSION_FORMATS, files
from memory.importers.sessions import SUFFIXES, ingest_file
from memory.models import SessionFile, WatchScan

if TYPE_CHECKING:
    from django_q.models import Schedule

SCHEDULE_NAME = "grove-watch"


@dataclass(frozen=True)
class Folder:
    format: str
    path: Path
    domain: str | None = None

    def __str__(self) -> str:
        return f"{self.format}{'@' + self.domain if self.domain else ''}:{self.path}"


def folders(value: str | None = None) -> list[Folder]:
    """The watched folders named by `value` (default GROVE_WATCH), as given and expanded (~).
    Refuses (Invalid) an entry without a known format."""
    value = settings.GROVE_WATCH if value is None else value
    found = []
    for entry in filter(None, (part.strip() for part in value.split(","))):
        name, _, folder = entry.partition(":")
        name, _, domain = name.partition("@")
        if name not in SESSION_FORMATS or not folder.strip() or len(domain) > 64:
            raise Invalid(
                f"watch entry {entry!r}: expected FORMAT[@DOMAIN]:FOLDER, FORMAT one of "
                f"{', '.join(SESSION_FORMATS)}",
                code="bad_watch",
            )
        found.append(Folder(name, Path(folder.strip()).expanduser(), domain.strip() or None))
    return found


def scan(*, watched: list[Folder] | None = None, actor: str = "watch") -> WatchScan:
    """One scan of the watched folders (default GROVE_WATCH): import what changed since each
    file's cursor. Reads the files' mtimes and sizes, never as a clock: only as "moved or not".
    A folder that is missing, or a file that fails, is named in the scan's errors; the others
    go on."""
    watched = folders() if watched is None else watched
    record = WatchScan.objects.create(folders=[str(folder) for folder in watched])
    stats = {
        path: (size, mtime)
        for path, size, mtime in SessionFile.objects.values_list("path", "size", "mtime_ns")
    }
    try:
        for folder in watched:
            _scan_folder(folder, record, stats=stats, actor=actor)
    finally:
        record.finished_at = timezone.now()
        record.save()
    return record


def _scan_folder(
    folder: Folder, record: WatchScan, *, stats: dict[str, tuple[int, int]], actor: str
) -> None:
    root = folder.path.resolve()
    if not root.is_dir():
        record.errors.append(f"{folder}: no such folder")
        return
    fmt = import_string(SESSION_FORMATS[folder.format])
    _, paths = files.find(root, SUFFIXES)
    for path in paths:
        record.files_seen += 1
        try:
            stat = path.stat()
        except OSError as exc:
            record.errors.append(f"{path}: {exc.strerror}")
            continue
        if stats.get(str(path)) == (stat.st_size, stat.st_mtime_ns):
            continue
        try:
            one = ingest_file(
                path,
                fmt,
                root=root,
                domain=folder.domain,
                tools=settings.GROVE_WATCH_TOOLS == "lines",
                actor=f"{actor}:{folder.format}",
            )
        except GroveError as exc:
            record.errors.append(f"{path}: {exc.code}: {exc.message}")
            continue
        record.files_changed += 1
        record.turns_new += one.turns_new + one.tool_lines
        record.errors.extend(one.malformed)


def last_scan() -> WatchScan | None:
    return WatchScan.objects.order_by("-id").first()


def ensure_schedule(*, seconds: int | None = None) -> Schedule | None:
    """Create or update the django-q2 schedule that scans GROVE_WATCH every GROVE_WATCH_SECONDS
    (in whole minutes, at least one: django-q2's finest schedule), or remove it when nothing is
    watched. Idempotent. Refuses (Invalid) a GROVE_WATCH it cannot read."""
    from django_q.models import Schedule

    watched = folders()
    if not watched:
        Schedule.objects.filter(name=SCHEDULE_NAME).delete()
        return None
    minutes = max(1, math.ceil((seconds or settings.GROVE_WATCH_SECONDS) / 60))
    schedule, _ = Schedule.objects.update_or_create(
        name=SCHEDULE_NAME,
        defaults={
            "func": "memory.tasks.scheduled_watch",
            "schedule_type": Schedule.MINUTES,
            "minutes": minutes,
            "repeats": -1,
        },
    )
    return schedule
