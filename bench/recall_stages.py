"""Recall's stages at one size, on the copy the recall bench prepared (migrated, embedded and
indexed; GROVE_BENCH_REUSE=1 keeps it): wall and cpu p50/p95 per recall, each stage's cpu p50,
and how often the note a query was drawn from is in its top 10. Queries as the recall bench
draws them (2-5 content words of a node's body), scope both, after 20 warm-up recalls.

    python -m bench.recall_stages --size 1000000 [--queries 300] [--fused | --paired]

Cpu time beside wall time: on a shared machine wall time is mostly waiting for a core. A
recall's cpu counts both its threads (the vector list runs on a worker from 50k rows); a stage's,
its own thread's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import resource
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

STAGES = [
    ("memory.recall.rank", "fts_candidates"),
    ("memory.recall.rank", "trigram_candidates"),
    ("memory.recall.rank", "date_candidates"),
    ("memory.recall", "_nearest"),  # the vector list: on a worker thread from 50k rows
    ("memory.recall.rank", "_lawful"),
    ("memory.recall.rank", "_expand"),
    ("memory.packets", "preview_rows"),  # the pool's rows (and their parents, for the reranker)
    ("memory.recall.rank", "boost"),  # those rows read, recency and the signer boost
    ("memory.recall", "_meaning"),  # the pool's cosines to the query (a reranker fitted for e5)
    ("memory.recall.rerank", "signals"),
    ("memory.recall.rerank", "reorder"),
]


def _timed(fn: Callable[..., Any], into: list[float]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # The stage's own thread: the vector list may run on a worker beside the word lists.
        started = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            into.append((time.thread_time() - started) * 1000)

    return wrapper


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--fused", action="store_true", help="without the reranker")
    parser.add_argument(
        "--paired", action="store_true", help="each query with and without the reranker"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grove.settings")
    import django

    django.setup()
    import importlib

    from django.db import connection

    from bench.synthetic import bench_dir, use_database
    from memory.recall import query_terms, recall, rerank

    if args.fused:
        rerank._override.append(None)  # the fused order for the whole run

    stages: dict[str, list[float]] = defaultdict(list)
    for module, name in STAGES:
        mod = importlib.import_module(module)
        setattr(mod, name, _timed(getattr(mod, name), stages[name]))
    path = bench_dir() / f"recall-{args.size}.sqlite3"
    if not path.exists():
        raise SystemExit(f"{path} is missing: run the recall bench at this size first")
    rng = random.Random(11)
    with use_database(path):
        step = max(1, args.size // args.queries)
        with connection.cursor() as cursor:  # the same sample in every run, old code or new
            cursor.execute(
                "SELECT id, body FROM memory_node WHERE id %% %s = 7 ORDER BY id LIMIT %s",
                [step, args.queries],
            )
            sample = cursor.fetchall()
        queries = []
        for _, body in sample:
            words = query_terms(body)
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 5)))))
        for q in queries[:20]:
            recall(q, scope="both")
        for values in stages.values():
            values.clear()
        if args.paired:
            return _paired(queries, recall, rerank)
        wall, cpu, found = [], [], 0
        for (node_id, _), q in zip(sample, queries, strict=True):
            started, started_cpu = time.perf_counter(), time.process_time()
            ids = [p["id"] for p in recall(q, scope="both")]
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
            found += node_id in ids
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load = os.getloadavg()[0]
    print(
        f"{args.size:,} nodes, {len(queries)} queries, load {load:.1f}: "
        f"wall p50 {statistics.median(wall):.1f} p95 {_pct(wall, 0.95):.1f} ms; "
        f"cpu p50 {statistics.median(cpu):.1f} p95 {_pct(cpu, 0.95):.1f} ms; "
        f"source in top 10 {found}/{len(queries)}; peak RSS {peak:.0f} MB"
    )
    for name, values in stages.items():
        if values:
            p50, p95 = statistics.median(values), _pct(values, 0.95)
            print(f"  {name:20s} cpu p50 {p50:6.2f} p95 {p95:6.2f} ms")


def _paired(queries: list[str], recall: Callable[..., Any], rerank: Any) -> None:
    """Each query recalled with and without the reranker, in alternating order: its cost with
    the load shared by both (a paired run in two processes swings with the load)."""
    on: list[float] = []
    off: list[float] = []
    for k, q in enumerate(queries):
        for reranked in (True, False) if k % 2 else (False, True):
            started = time.process_time()
            with contextlib.nullcontext() if reranked else rerank.using(None):
                recall(q, scope="both")
            (on if reranked else off).append((time.process_time() - started) * 1000)
    diff = statistics.median(a - b for a, b in zip(on, off, strict=True))
    print(
        f"{len(queries)} queries, load {os.getloadavg()[0]:.1f}: cpu p50 with the reranker "
        f"{statistics.median(on):.2f} ms, without {statistics.median(off):.2f} ms; "
        f"per-query difference p50 {diff:.2f} ms"
    )


if __name__ == "__main__":
    main()
