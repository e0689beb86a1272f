"""Watch benchmark: importing a coding agent's session (memory/importers/sessions.py) and the
timed scan of the watched folders (memory/importers/watch.py), against file events.

- A Claude Code session of 2,000 turns (user, agent, and every third a tool call) imported
  into an empty memory; then 10 more turns appended and imported (read from the cursor); then
  the unchanged file again.
- A scan of N session files none of which changed (their cursors recorded): one stat each.
- watchdog (file events), when it is installed (`uv run --with watchdog python -m bench --only
  watch`; Grove does not depend on it): how long its recursive observer takes to start on the
  same tree, and how long an append takes to reach it.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from bench.synthetic import bench_dir, migrated, use_database

TURNS = 2_000
FILES = (1_000, 10_000)
PER_FOLDER = 100


def _line(n: int) -> str:
    role = "user" if n % 2 == 0 else "assistant"
    if n % 3 == 2:
        block = {"type": "tool_use", "name": "Bash", "input": {"command": f"pytest -q -k case{n}"}}
    else:
        block = {"type": "text", "text": f"Turn {n}: the heat pump filter, case {n}, in October."}
    return json.dumps(
        {
            "type": role,
            "uuid": f"u-{n}",
            "sessionId": "bench",
            "cwd": "/home/bench/project",
            "timestamp": f"2025-05-26T10:{n // 60 % 60:02d}:{n % 60:02d}Z",
            "message": {"role": role, "content": [block]},
        }
    )


def _import_times(work: Path) -> tuple[float, float, float]:
    from memory.importers.claude_code import ingest

    session = work / "projects" / "p" / "bench.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text("".join(_line(n) + "\n" for n in range(TURNS)))
    started = time.perf_counter()
    ingest(session)
    whole = time.perf_counter() - started
    with session.open("a") as handle:
        handle.write("".join(_line(n) + "\n" for n in range(TURNS, TURNS + 10)))
    started = time.perf_counter()
    ingest(session)
    grown = time.perf_counter() - started
    started = time.perf_counter()
    ingest(session)
    return whole, grown, time.perf_counter() - started


def _tree(root: Path, n: int) -> list[Path]:
    paths = []
    for i in range(n):
        path = root / f"project-{i // PER_FOLDER}" / f"s-{i}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_line(0) + "\n")
        paths.append(path)
    return paths


def _scan_time(root: Path, paths: list[Path]) -> float:
    from memory.importers import watch
    from memory.models import SessionFile

    now = timezone.now()
    SessionFile.objects.all().delete()
    SessionFile.objects.bulk_create(
        SessionFile(
            path=str(p.resolve()),
            format="claude-code",
            domain="project",
            size=(s := p.stat()).st_size,
            mtime_ns=s.st_mtime_ns,
            offset=s.st_size,
            updated_at=now,
        )
        for p in paths
    )
    runs = []
    for _ in range(3):
        started = time.perf_counter()
        scan = watch.scan(watched=watch.folders(f"claude-code:{root}"))
        runs.append(time.perf_counter() - started)
        assert scan.files_changed == 0, scan.errors
    return min(runs)


def _watchdog_times(root: Path, paths: list[Path]) -> tuple[float, float] | None:
    if importlib.util.find_spec("watchdog") is None:
        return None
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer

    seen = threading.Event()

    class Handler(FileSystemEventHandler):
        def on_modified(self, event) -> None:  # type: ignore[no-untyped-def]
            seen.set()

    observer = Observer()
    started = time.perf_counter()
    observer.schedule(Handler(), str(root), recursive=True)
    observer.start()
    start = time.perf_counter() - started
    delays = []
    try:
        for path in paths[:: max(1, len(paths) // 20)]:
            seen.clear()
            began = time.perf_counter()
            with path.open("a") as handle:
                handle.write(_line(1) + "\n")
            seen.wait(5)
            delays.append(time.perf_counter() - began)
    finally:
        observer.stop()
        observer.join()
    return start, statistics.median(delays)


def run(sizes: list[int]) -> str:
    work = Path(tempfile.mkdtemp(prefix="watch-", dir=bench_dir()))
    settings.GROVE_CHAIN_ANCHOR = work / "anchors.jsonl"
    db = work / "watch.sqlite3"
    rows = []
    try:
        with use_database(migrated(db)):
            whole, grown, again = _import_times(work)
            for n in FILES:
                root = work / f"tree-{n}"
                paths = _tree(root, n)
                scan = _scan_time(root, paths)
                events = _watchdog_times(root, paths)
                rows.append((n, scan, events))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [
        "## Watching agents' sessions",
        "",
        f"A Claude Code session of {TURNS:,} turns (a third of them tool calls, written as "
        f"labelled lines) into an empty memory: **{whole:.1f} s** ({TURNS / whole:,.0f} turns/s). "
        f"Ten more turns appended, read from the cursor: {grown * 1000:.0f} ms. The unchanged "
        f"file again: {again * 1000:.0f} ms (its head re-hashed, nothing parsed).",
        "",
        "A scan of session files of which none changed (one stat each, the cursors read in one "
        "query), best of three; beside it watchdog's recursive observer, when installed: its "
        "start on the same tree and the median time from an append to its event.",
        "",
        "| files | scan, nothing changed | watchdog start | watchdog append to event |",
        "|---:|---:|---:|---:|",
    ]
    for n, scan, events in rows:
        start, delay = (
            (f"{events[0] * 1000:.0f} ms", f"{events[1] * 1000:.1f} ms") if events else ("-", "-")
        )
        lines.append(f"| {n:,} | {scan * 1000:.0f} ms | {start} | {delay} |")
    lines += [
        "",
        "Command: `uv run --with watchdog python -m bench --only watch` (`make bench "
        'BENCH_ARGS="--only watch"` without watchdog).',
    ]
    return "\n".join(lines) + "\n"
