"""Sleep benchmarks: the first full run, an incremental run after 1,000 new nodes, the decay step
alone, and peak memory, on synthetic graphs (bench.synthetic.graph_copy).

Targets: the first sleep's decay step collects >= 10,000 nodes at 100k in <= 1 s (the graphs
hold garbage: unread notes that no read or young node derives from or cites); first full sleep
<= 60 s at 100k; incremental <= 5 s; peak RSS <= 1 GB. At 1M: full <= 10 min, incremental
<= 5 s, peak RSS <= 1.5 GB; cross-link through the vector index keeps >= 95% of the exact
search's edges (measured on 10k).
"""

from __future__ import annotations

import random
import resource
import shutil
import time
from datetime import UTC, datetime

from bench.synthetic import _vocabulary, graph_copy, sentence, use_database

NEW_NODES = 1000
AGREEMENT_NODES = 10_000


def fresh_graph(n: int, name: str):
    """graph_copy, without a vector index left by an earlier run on the same file."""
    from memory.vectors.embed import get_embedder
    from memory.vectors.index import index_dir

    path = graph_copy(n, name)
    with use_database(path):
        shutil.rmtree(index_dir(get_embedder().name), ignore_errors=True)
    anchors(path).unlink(missing_ok=True)
    return path


def anchors(path):
    """Each copy its own chain anchor file: copies share event ids, not their hashes, and one
    shared file would report every later copy as rewritten (and keep its checks from passing)."""
    return path.with_name(path.name + ".anchors.jsonl")


def crosslink_agreement(n: int = AGREEMENT_NODES) -> tuple[float, int, float, float]:
    """Share of the exact search's similar edges (each node's top `cap` older same-domain
    neighbours at or above the threshold) that cross-link through the vector index also makes,
    with both timings: (agreement, exact edges, exact seconds, index seconds)."""
    from django.test import override_settings

    from memory.models import Edge
    from memory.sleep.crosslink import crosslink
    from memory.vectors.embed import embed_missing

    edges: dict[str, set[tuple[int, int]]] = {}
    took: dict[str, float] = {}
    for name, min_rows in (("exact", 10**12), ("index", 0)):
        path = fresh_graph(n, f"agree-{name}")
        with use_database(path), override_settings(GROVE_ANN_MIN_ROWS=min_rows):
            embed_missing(batch=2000)
            started = time.perf_counter()
            crosslink()
            took[name] = time.perf_counter() - started
            edges[name] = set(
                Edge.objects.filter(kind="similar").values_list("from_node_id", "to_node_id")
            )
    agreement = len(edges["exact"] & edges["index"]) / max(len(edges["exact"]), 1)
    return agreement, len(edges["exact"]), took["exact"], took["index"]


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


def _semantic_step() -> float:
    """Seconds for the semantic step's first fit (fit + embed every live node + publish)."""
    from django.test import override_settings

    from memory.sleep.run import run_sleep
    from memory.vectors import semantic

    semantic.model_path().unlink(missing_ok=True)
    semantic.forget()
    with override_settings(GROVE_SEMANTIC_MODEL=True):
        started = time.perf_counter()
        run_sleep(requested_by="bench", only_step="semantic")
        took = time.perf_counter() - started
        semantic.model_path().unlink(missing_ok=True)
    semantic.forget()
    return took


def _steps(run) -> str:
    """Per step: wall seconds (this process's CPU seconds) / count."""
    return ", ".join(
        f"{name} {info.get('ms', 0) / 1000:.1f}s ({info.get('cpu_ms', 0) / 1000:.1f})"
        f"/{info.get('count', 0)}"
        for name, info in run.steps.items()
        if not name.startswith("_")
    )


def run(sizes: list[int]) -> str:
    from django.test import override_settings

    from memory.sleep.decay import decay
    from memory.sleep.run import run_sleep

    lines = [
        "## Sleep",
        "",
        "Synthetic graphs (bench.synthetic). *Full* is the first sleep over the whole graph "
        "(embed every node, cross-link all pairs, consolidate, promote, decay, integrity); "
        f"*incremental* is the next sleep after {NEW_NODES:,} new notes written through "
        "write_node; the decay step of the full sleep is the mark-and-sweep collecting the "
        "graph's garbage; *decay again* is the step alone on the slept graph. "
        "Targets: the full sleep's decay step collects >= 10,000 at 100k in <= 1 s, "
        "full <= 60 s at 100k, incremental <= 5 s, peak RSS <= 1 GB; at 1M: full "
        "<= 10 min, incremental <= 5 s, peak RSS <= 1.5 GB. Steps: wall seconds (this "
        "process's CPU seconds) / count.",
        "",
        "| nodes | full sleep | incremental | decay step in the full sleep (collected) | "
        "decay again on the slept graph | semantic step (opt-in) | peak RSS | steps (full) |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for n in sizes:
        path = fresh_graph(n, "sleep")
        with (
            use_database(path),
            override_settings(
                # The sweep is what is timed: the guard would hold back a first mass decay.
                GROVE_CHAIN_ANCHOR=str(anchors(path)),
                GROVE_DECAY_GUARD_SHARE=1.0,
            ),
        ):
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
            semantic_s = _semantic_step()
        first = full.steps["decay"]
        print(f"  {n:,}: full {_steps(full)}")
        print(f"  {n:,}: incremental {_steps(incremental)}")
        lines.append(
            f"| {n:,} | {full_s:.1f} s | {inc_s:.2f} s | {first['ms'] / 1000:.2f} s "
            f"({first['count']:,}) | {again_s:.2f} s ({again}) | {semantic_s:.1f} s | "
            f"{_peak_mb():.0f} MB | {_steps(full)} |"
        )
    agreement, exact_edges, exact_s, index_s = crosslink_agreement()
    lines += [
        "",
        "Peak RSS is the process maximum (ru_maxrss) after all sizes, so it includes the "
        "embedder and the largest graph's vectors. *Semantic step (opt-in)*: the first fit of "
        "the semantic model (GROVE_SEMANTIC_MODEL, off by default) on the slept graph, with "
        "every live node embedded under it. With the model on, this replaces the embed step's "
        "work in a full sleep (embed then finds every node done). From GROVE_ANN_MIN_ROWS "
        "(50,000) vectors on, cross-link draws its candidates from the vector index "
        "(memory.vectors.index).",
        "",
        f"Cross-link through the vector index against exact search, {AGREEMENT_NODES:,} nodes: "
        f"**{agreement:.1%}** of the exact search's {exact_edges:,} similar edges made "
        f"(target >= 95%); exact {exact_s:.1f} s, index {index_s:.1f} s (index forced on).",
    ]
    return "\n".join(lines)
