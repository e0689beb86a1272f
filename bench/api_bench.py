"""Agent API and importer benchmarks.

1. Writes per second through the JSON API: a real server process (waitress, 8 threads) on a
   free 127.0.0.1 port over a synthetic graph copy, 4 client threads (http.client) writing notes
   WHILE `manage.py sleep` runs in another process. Asserts no "database is locked" surfaces
   (in any response or in either process's stderr) and that every acknowledged write is present
   afterwards.
2. Import speed for a generated 10,000-note Obsidian-style vault (sections and wikilinks), then
   the re-import of the unchanged vault (which must add nothing).
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from django.conf import settings

from bench.synthetic import _vocabulary, bench_dir, graph_copy, sentence, use_database

CLIENTS = 4
WRITES_PER_CLIENT = 250
VAULT_NOTES = 10_000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(db: Path) -> dict[str, str]:
    import os

    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "grove.settings",
        "GROVE_DB_PATH": str(db),
        "GROVE_DATA_DIR": str(settings.DATA_DIR),
        "GROVE_SCROLL_DIR": str(db.parent / "scroll-api"),
    }


def _wait_listening(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def _client(
    port: int, secret: str, origin: int, n: int, seed: int, acked: list[int], errors: list[str]
) -> None:
    rng = random.Random(seed)
    vocab = _vocabulary(random.Random(7))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    for i in range(n):
        body = {
            "body": f"{sentence(rng, vocab, rng.randint(8, 20))} (client {seed} write {i})",
            "kind": "note",
            "jurisdiction": "home",
            "signature": "bench",
            "origins": [{"id": origin, "relation": "derived_from"}],
        }
        try:
            conn.request("POST", "/api/v1/nodes", body=json.dumps(body), headers=headers)
            response = conn.getresponse()
            payload = response.read().decode()
        except (OSError, http.client.HTTPException) as exc:
            errors.append(f"transport: {exc}")
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            continue
        if response.status in (200, 201):
            acked.append(json.loads(payload)["id"])
        else:
            errors.append(f"{response.status}: {payload[:200]}")
    conn.close()


def _api_writes(n_nodes: int, *, with_sleep: bool) -> tuple[str, list[str]]:
    db = graph_copy(n_nodes, "api")
    with use_database(db):
        from memory.tokens import create_token

        _, secret = create_token(name="bench", domains=["personal"])
    origin = (
        sqlite3.connect(db)
        .execute("SELECT min(id) FROM memory_node WHERE domain = 'personal'")
        .fetchone()[0]
    )
    port = _free_port()
    env = _env(db)
    server = _start_waitress(port, env)
    notes: list[str] = []
    sleep_err, sleep_ok, overlap = "", True, "-"
    try:
        _wait_listening(port, server)
        sleeper = _start_sleep(env) if with_sleep else None
        acked, errors, took, sleep_done_at = _write_together(port, secret, origin, sleeper)
        if sleeper is not None:
            _, sleep_err = sleeper.communicate(timeout=1800)
            sleep_ok = sleeper.returncode == 0
            overlap = (
                "whole window"
                if sleep_done_at is None
                else f"first {sleep_done_at:.0f} s (+1 s before)"
            )
    finally:
        server.terminate()
        _, server_err = server.communicate(timeout=30)
    locked, lost = _nothing_locked_nothing_lost(db, acked, [*errors, server_err, sleep_err])
    total = CLIENTS * WRITES_PER_CLIENT
    if errors:
        notes.append(f"{len(errors)} refused writes at {n_nodes:,}: {errors[:3]}")
    if not sleep_ok:
        notes.append(f"sleep at {n_nodes:,} failed: {sleep_err.strip().splitlines()[-1:]}")
    row = (
        f"| {n_nodes:,} | {'full sleep running' if with_sleep else 'idle'} | {overlap} | "
        f"{len(acked)}/{total} | {took:.1f} s | **{len(acked) / took:.0f}** | {locked} | {lost} |"
    )
    return row, notes


def _start_waitress(port: int, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "waitress",
            f"--listen=127.0.0.1:{port}",
            "--threads=8",
            "grove.wsgi:application",
        ],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _start_sleep(env: dict[str, str]) -> subprocess.Popen:
    sleeper = subprocess.Popen(
        [sys.executable, "manage.py", "sleep"],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)  # let the sleep claim its run and start its first step
    return sleeper


def _write_together(
    port: int, secret: str, origin: int, sleeper: subprocess.Popen | None
) -> tuple[list[int], list[str], float, float | None]:
    """CLIENTS threads writing at once: (acked ids, errors, seconds taken, seconds into the
    window when the sleep finished, None when it ran past the window or there is none)."""
    acked: list[int] = []
    errors: list[str] = []
    threads = [
        threading.Thread(
            target=_client, args=(port, secret, origin, WRITES_PER_CLIENT, c, acked, errors)
        )
        for c in range(CLIENTS)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    sleep_done_at = None
    while any(thread.is_alive() for thread in threads):
        if sleeper is not None and sleep_done_at is None and sleeper.poll() is not None:
            sleep_done_at = time.perf_counter() - started
        time.sleep(0.05)
    return acked, errors, time.perf_counter() - started, sleep_done_at


def _nothing_locked_nothing_lost(db: Path, acked: list[int], texts: list[str]) -> tuple[int, int]:
    """(locked, lost), after asserting both are 0: no "database is locked" in any response or
    process output, and every acknowledged write is in the file."""
    present = {
        row[0]
        for row in sqlite3.connect(db).execute(
            f"SELECT id FROM memory_node WHERE id IN ({','.join(map(str, acked)) or '0'})"
        )
    }
    locked = sum("database is locked" in text for text in texts)
    lost = len(set(acked) - present)
    assert locked == 0, "a 'database is locked' error surfaced"
    assert lost == 0, f"{lost} acknowledged writes are missing"
    return locked, lost


def make_vault(root: Path, n_notes: int, *, seed: int = 3) -> None:
    """n_notes markdown files, two or three sections each, with wikilinks to other notes (one in
    twenty to a note that does not exist), spread over 20 folders."""
    rng = random.Random(seed)
    vocab = _vocabulary(random.Random(7))
    for i in range(n_notes):
        folder = root / f"area-{i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        links = " ".join(
            f"[[note-{rng.randrange(n_notes)}]]" if rng.random() > 0.05 else f"[[ghost-{i}]]"
            for _ in range(rng.randint(0, 3))
        )
        parts = [f"{sentence(rng, vocab, rng.randint(8, 25))} {links}".strip()]
        for s in range(rng.randint(1, 2)):
            parts.append(f"## Part {s}\n{sentence(rng, vocab, rng.randint(8, 25))} (note {i})")
        (folder / f"note-{i}.md").write_text(f"# Note {i}\n" + "\n\n".join(parts) + "\n")


def _vault_import() -> tuple[str, str]:
    from memory.importers.markdown import ingest
    from memory.models import Node

    db = graph_copy(1000, "vault")
    with tempfile.TemporaryDirectory(dir=bench_dir()) as tmp:
        root = Path(tmp) / "vault"
        make_vault(root, VAULT_NOTES)
        with use_database(db):
            before = Node.objects.count()
            started = time.perf_counter()
            first = ingest(root, progress=False)
            took = time.perf_counter() - started
            middle = Node.objects.count()
            started = time.perf_counter()
            second = ingest(root, progress=False)
            again = time.perf_counter() - started
            assert Node.objects.count() == middle, "re-import added nodes"
            assert second.nodes_created == 0
    first_row = (
        f"| first import | {first.files_seen:,} | {middle - before:,} | {first.links:,} "
        f"({first.links_missing} missing) | {took:.1f} s | **{first.files_seen / took:.0f}** |"
    )
    second_row = (
        f"| re-import, unchanged | {second.files_seen:,} | 0 | {second.links_new} new | "
        f"{again:.1f} s | **{second.files_seen / again:.0f}** |"
    )
    return first_row, second_row


def run(sizes: list[int]) -> str:
    lines = [
        "## Agent API and importers",
        "",
        f"Writes through `POST /api/v1/nodes`: a waitress server process (8 threads) on "
        f"127.0.0.1, {CLIENTS} client threads (http.client, keep-alive) writing "
        f"{WRITES_PER_CLIENT} notes each over a copy of the synthetic graph: once idle, once "
        "while `manage.py sleep` runs its first full sleep (embed, cross-link, consolidate, "
        "promote, decay, integrity) over the same file in another process. Each write is "
        "a full request: token check, scope check, write path (content-key lookup, insert, "
        "edge, FTS trigger), commit. Asserted: no 'database is locked' in any response or "
        "either process's stderr, and every acknowledged write present afterwards.",
        "",
        "| graph nodes | meanwhile | sleep overlapped the writes | acknowledged | wall | "
        "writes/s | 'locked' errors | lost |",
        "|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    notes: list[str] = []
    for n in sizes:
        for with_sleep in (False, True):
            row, more = _api_writes(n, with_sleep=with_sleep)
            lines.append(row)
            notes.extend(more)
    first_row, second_row = _vault_import()
    lines += [
        "",
        f"Import of a generated {VAULT_NOTES:,}-note Obsidian-style vault (20 folders, 2-3 "
        "sections per note, 0-3 wikilinks each, 1 in 20 to a missing note) into a 1,000-node "
        "graph, in-process: one transaction per file, every node through the write path.",
        "",
        "| run | files | nodes added | links | wall | files/s |",
        "|---|---:|---:|---:|---:|---:|",
        first_row,
        second_row,
    ]
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    return "\n".join(lines) + "\n"
