"""The decay step alone, timed on fresh copies of one graph slept up to it (not a make bench
section): `python -m bench.decay_step [--size 100000] [--runs 3] [--limit N]`.

The first run copies the cached graph (bench.synthetic.graph_copy), runs sleep's steps before
decay (embed, entities, cross-link, consolidate, promote) and keeps that file in the bench dir.
Each run copies it, checkpoints and syncs the copy (so no run pays for writing the last one),
and times decay() (with `--limit`, sleep's work cap: the full mark, then at most N nodes swept)
with its CPU time (time.process_time) and wall time; then the medians.
On a shared machine compare trees by running this from each, interleaved.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

BEFORE_DECAY = ("embed", "entities", "crosslink", "consolidate", "promote")


def _slept_base(size: int) -> Path:
    from django.db import connection

    from bench.synthetic import bench_dir, graph_copy, use_database
    from memory.sleep.run import run_sleep

    base = bench_dir() / f"decay-step-base-{size}.sqlite3"
    if base.exists():
        return base
    path = graph_copy(size, "decay-step-prepare")
    with use_database(path):
        for step in BEFORE_DECAY:
            run_sleep(only_step=step, requested_by="bench")
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path.rename(base)
    return base


def _one_run(base: Path, limit: int | None = None) -> tuple[float, float, dict]:
    from django.core.management import call_command
    from django.db import connection
    from django.test import override_settings

    from bench.synthetic import use_database
    from memory.sleep.decay import decay

    copy = base.with_name(f"decay-step-run-{os.getpid()}.sqlite3")
    for suffix in ("-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(base, copy)
    try:
        with use_database(copy):
            call_command("migrate", verbosity=0)  # a base from before a new migration
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            os.sync()
            wall, cpu = time.perf_counter(), time.process_time()
            # The sweep is what is timed: the guard would hold back a first mass decay.
            with override_settings(GROVE_DECAY_GUARD_SHARE=1.0):
                result = decay(now=datetime.now(UTC), limit=limit)
            return time.perf_counter() - wall, time.process_time() - cpu, result
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{copy}{suffix}").unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None, help="sleep's work cap on the sweep")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grove.settings")
    import django

    django.setup()
    base = _slept_base(args.size)
    walls, cpus = [], []
    for run in range(args.runs):
        wall, cpu, result = _one_run(base, args.limit)
        walls.append(wall)
        cpus.append(cpu)
        print(f"run {run + 1}: {wall:.3f} s wall, {cpu:.3f} s CPU, {result}", flush=True)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"median of {args.runs}: {statistics.median(walls):.3f} s wall, "
        f"{statistics.median(cpus):.3f} s CPU (load average {load})"
    )


if __name__ == "__main__":
    main()
