"""Batch benchmark: a let go of 10,000 nodes as one batch, and its undo (memory/batches.py), on
a fresh copy of a synthetic graph per size. The undo reads the batch's events by the indexed
batch id, checks each node for a later act, restores in chunks and writes one event per node
through audit.record_many: its time grows with the batch, not with the memory.
"""

from __future__ import annotations

import time

from bench.synthetic import graph_copy, use_database

BATCH = 10_000


def _measure(n: int) -> tuple[int, float, float, float, float]:
    from memory import batches
    from memory.models import Node

    path = graph_copy(n, "batch")
    with use_database(path):
        ids = list(
            Node.objects.filter(kind="note", decayed_at__isnull=True)
            .order_by("pk")
            .values_list("pk", flat=True)[:BATCH]
        )
        started, cpu = time.perf_counter(), time.process_time()
        done = batches.let_go_many(ids, actor="owner", words="bench")
        let_go, let_go_cpu = time.perf_counter() - started, time.process_time() - cpu
        started, cpu = time.perf_counter(), time.process_time()
        batches.undo(done.batch, actor="owner")
        undo, undo_cpu = time.perf_counter() - started, time.process_time() - cpu
    return len(done.done), let_go, undo, let_go_cpu, undo_cpu


def run(sizes: list[int]) -> str:
    lines = [
        "## Batches",
        "",
        f"A let go of up to {BATCH:,} live notes as one batch, then its undo (fresh copy per "
        "size, real SQLite file with WAL). Seconds, wall and this process's CPU (on a shared "
        "machine the wall time also counts waiting for a core); target: undo of 10,000 at most "
        "5 s.",
        "",
        "| nodes | batch | let go | undo | let go cpu | undo cpu |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        count, let_go, undo, let_go_cpu, undo_cpu = _measure(n)
        lines.append(
            f"| {n:,} | {count:,} | {let_go:.2f} | {undo:.2f} | {let_go_cpu:.2f} | {undo_cpu:.2f} |"
        )
    return "\n".join(lines) + "\n"
