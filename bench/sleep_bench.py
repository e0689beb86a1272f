"""Sleep benchmarks: the first full run, an incremental run after 1,000 new nodes, the decay step
alone, and peak memory, on synthetic graphs (bench.synthetic.graph_copy).

Targets (issues 4 and 11): the first sleep's decay step collects >= 10,000 nodes at 100k in
<= 1 s (the graphs hold garbage: unread notes that no read or young node derives from or cites);
first full sleep <= 60 s at 100k; incremental <= 5 s; peak RSS <= 1 GB.
"""

from __future__ import annotations

import random
import resource
import time
from datetime import UTC, datetime

from bench.synthetic import _vocabulary, graph_copy, sentence, use_database

NEW_NODES = 1000


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _add_nodes(count: int, *, seed: int) -> None:
    """Insert `count` new notes through the write path (store clock = now), each derived from
    the most recent import node, as a day of ingest would."""
    from memory.models import Node
    from memory.write import write_node

    rng = random.Random(seed)
    vocab = _vocabulary(random.Random(7))
    parent = Node.objects.filter(kind="import").order_by("-id").values_list("id", flat=True)[0]
    for i in range(count):
        body = " ".join(sentence(rng, vocab, rng.randint(6, 18)) for _ in range(2))
        write_node(
            body=f"{body} (new {i})",
            kind="note",
            jurisdiction="home",
            signature="bench",
            origins=[{"id": parent, "relation": "derived_from"}],
        )


def _steps(run) -> str:
    return ", ".join(
        f"{name} {info.get('ms', 0) / 1000:.1f}s/{info.get('count', 0)}"
        for name, info in run.steps.items()
        if not name.startswith("_")
    )


def run(sizes: list[int]) -> str:
    from memory.sleep import run_sleep
    from memory.sleep.decay import decay

    lines = [
        "## Sleep",
        "",
        "Synthetic graphs (bench.synthetic). *Full* is the first sleep over the whole graph "
        "(embed every node, cross-link all pairs, consolidate, promote, decay, integrity); "
        f"*incremental* is the next sleep after {NEW_NODES:,} new notes written through "
        "write_node; the decay step of the full sleep is the mark-and-sweep collecting the "
        "graph's garbage; *decay again* is the step alone on the slept graph. "
        "Targets: the full sleep's decay step collects >= 10,000 at 100k in <= 1 s, "
        "full <= 60 s at 100k, incremental <= 5 s, peak RSS <= 1 GB.",
        "",
        "| nodes | full sleep | incremental | decay step in the full sleep (collected) | "
        "decay again on the slept graph | peak RSS | steps (full) |",
        "|---:|---:|---:|---:|---:|---:|---|",
    ]
    for n in sizes:
        path = graph_copy(n, "sleep")
        with use_database(path):
            started = time.perf_counter()
            full = run_sleep(requested_by="bench")
            full_s = time.perf_counter() - started
            _add_nodes(NEW_NODES, seed=n)
            started = time.perf_counter()
            incremental = run_sleep(requested_by="bench")
            inc_s = time.perf_counter() - started
            started = time.perf_counter()
            again = decay(now=datetime.now(UTC))["count"]
            again_s = time.perf_counter() - started
        first = full.steps["decay"]
        print(f"  {n:,}: full {_steps(full)}")
        print(f"  {n:,}: incremental {_steps(incremental)}")
        lines.append(
            f"| {n:,} | {full_s:.1f} s | {inc_s:.2f} s | {first['ms'] / 1000:.2f} s "
            f"({first['count']:,}) | {again_s:.2f} s ({again}) | "
            f"{_peak_mb():.0f} MB | {_steps(full)} |"
        )
    lines += [
        "",
        "Peak RSS is the process maximum (ru_maxrss) after all sizes, so it includes the "
        "embedder and the largest graph's vectors.",
    ]
    return "\n".join(lines)
