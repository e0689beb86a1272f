"""Credentials kept out: the write path's throughput with detection on and off, and recall's
answer with and without its other_scopes count.

Writes: a 10,000-message transcript (synthetic sentences of 8-40 words, one message in 50
carrying a credential, one in 20 a <think> block) in ten files of 1,000, imported through
`ingest --format transcript` (write_node for every message) into two fresh migrated files, one
with the redaction replaced by a no-op (the write path before it); the files alternate between
the two, so load that changes during the run weighs on both alike. Detection
alone: the scrub of each of those bodies, in process. Recall: 300 queries over the synthetic
graph, scope home, timed as the recall alone and as the API's whole answer (recall,
forgotten_matches and other_scopes).
"""

from __future__ import annotations

import contextlib
import json
import random
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from bench.synthetic import _vocabulary, bench_dir, graph_copy, migrated, sentence, use_database

TURNS = 10_000
CHUNK = 1_000  # turns per transcript file
CREDENTIALS = [
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sU9wY1aC3eG5iK7mO9qS1uW3y",
    "postgres://grove:hunter2secret@db.example.org:5432/grove",
    "Authorization: Bearer 9f8Xk2LmQ7rT4vB1nZ6wP3sD",
]


def _messages(rng: random.Random) -> list[dict[str, str]]:
    vocab = _vocabulary(rng)
    out = []
    for i in range(TURNS):
        text = sentence(rng, vocab, rng.randint(8, 40))
        if i % 50 == 7:
            text += " " + rng.choice(CREDENTIALS)
        if i % 20 == 3:
            text = f"<think>{sentence(rng, vocab, 12)}</think>{text}"
        role = "user" if i % 2 == 0 else "assistant"
        out.append({"role": role, "content": text, "time": f"2026-01-01T{i // 600 % 24:02}:00:00Z"})
    return out


@contextlib.contextmanager
def _detection_off() -> Iterator[None]:
    def keep(text: str) -> tuple[str, dict[str, int]]:
        return text, {}

    with mock.patch("memory.scrub.redact", keep), mock.patch("memory.write.redact", keep):
        yield


def _fresh(name: str) -> Path:
    db = bench_dir() / f"secrets-{name}.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return migrated(db)


def _imports(paths: list[Path]) -> tuple[float, float]:
    """Seconds to import every chunk with detection off and on, into a database each; the
    chunks alternate off, on, off, on ... so a machine that gets busier mid-run slows both."""
    from memory.importers.transcript import ingest

    dbs = {"off": _fresh("off"), "on": _fresh("on")}
    spent = {"off": 0.0, "on": 0.0}
    for path in paths:
        for name in ("off", "on"):
            with use_database(dbs[name]), contextlib.ExitStack() as stack:
                if name == "off":
                    stack.enter_context(_detection_off())
                started = time.perf_counter()
                summary = ingest(path, domain=name)
                spent[name] += time.perf_counter() - started
            assert summary.messages_new == CHUNK, summary
    return spent["off"], spent["on"]


def _recall_times(size: int) -> tuple[float, float, float]:
    from django.db import connection

    from memory.recall import query_terms, recall
    from memory.recall.dig import forgotten_matches, other_scopes

    rng = random.Random(11)
    with use_database(graph_copy(size, "secrets-recall")):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT body FROM memory_node WHERE id %% %s = 7 ORDER BY id LIMIT 300",
                [max(1, size // 300)],
            )
            bodies = [row[0] for row in cursor.fetchall()]
        queries = []
        for body in bodies:
            words = query_terms(body)
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 5)))))
        for q in queries[:20]:
            recall(q, scope="home")
        alone, before, after = [], [], []
        for q in queries:
            t = time.perf_counter()
            recall(q, scope="home")
            recalled = time.perf_counter()
            forgotten_matches(q, scope="home")
            counted = time.perf_counter()
            other_scopes(q, scope="home")
            end = time.perf_counter()
            alone.append((recalled - t) * 1000)
            before.append((counted - t) * 1000)
            after.append((end - t) * 1000)
    return statistics.median(alone), statistics.median(before), statistics.median(after)


def run(sizes: list[int]) -> str:
    from memory.scrub import scrub_report

    messages = _messages(random.Random(5))
    paths = []
    for start in range(0, TURNS, CHUNK):
        path = bench_dir() / f"secrets-transcript-{start // CHUNK}.jsonl"
        path.write_text("\n".join(json.dumps(m) for m in messages[start : start + CHUNK]) + "\n")
        paths.append(path)
    scrub_us = []
    for m in messages:
        t = time.perf_counter()
        scrub_report(m["content"])
        scrub_us.append((time.perf_counter() - t) * 1e6)
    redacted = sum(bool(scrub_report(m["content"]).redacted) for m in messages)
    off, on = _imports(paths)
    lines = [
        "## Secrets kept out (bench/secrets_bench.py)",
        "",
        __doc__.split("\n\n", 1)[1].strip().replace("\n", " "),
        "",
        "| write path | turns | redacted | wall | turns/s |",
        "|---|---:|---:|---:|---:|",
        f"| detection off (before) | {TURNS:,} | 0 | {off:.1f} s | **{TURNS / off:.0f}** |",
        f"| detection on | {TURNS:,} | {redacted} | {on:.1f} s | **{TURNS / on:.0f}** |",
        "",
        f"The scrub of one message (median of {TURNS:,}, 8-40 words): "
        f"{statistics.median(scrub_us):.0f} µs (p95 {sorted(scrub_us)[int(0.95 * TURNS)]:.0f} µs).",
        "",
        "| graph nodes | recall alone p50 | + forgotten_matches (the answer before) p50 "
        "| + other_scopes (the answer now) p50 |",
        "|---:|---:|---:|---:|",
    ]
    for size in sizes:
        alone, before, after = _recall_times(size)
        lines.append(f"| {size:,} | {alone:.1f} ms | {before:.1f} ms | {after:.1f} ms |")
    lines += ["", '**Command.** `make bench BENCH_ARGS="--only secrets --sizes 10000"`.']
    return "\n".join(lines) + "\n"
