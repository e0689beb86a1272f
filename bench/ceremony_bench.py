"""Ceremony benchmark: root and supersede p50 on synthetic graphs of growing size.

Both acts touch one node, its events and (for supersede) one new node through write_node, so
their time should not grow with the memory. Each size runs on a fresh copy of the graph.
"""

from __future__ import annotations

import random
import statistics
import time

from bench.synthetic import graph_copy, use_database

ROUNDS = 60


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _measure(n: int) -> dict[str, list[float]]:
    from memory.models import Node
    from review.ceremony import preview_supersede, root, supersede

    path = graph_copy(n, "ceremony")
    timings: dict[str, list[float]] = {"root": [], "supersede": []}
    with use_database(path):
        ids = list(Node.objects.filter(kind="note").values_list("pk", flat=True)[:50_000])
        rng = random.Random(n)
        picked = rng.sample(ids, 2 * ROUNDS)
        for i, node_id in enumerate(picked):
            node = Node.objects.get(pk=node_id)
            started = time.perf_counter()
            root(node_id, adopting_words="bench", expected_body_hash=node.body_hash, owner="owner")
            elapsed = (time.perf_counter() - started) * 1000
            if i < ROUNDS:
                timings["root"].append(elapsed)
                continue
            text = f"{node.body} (revised {i})"
            preview = preview_supersede(text)
            started = time.perf_counter()
            supersede(
                node_id,
                new_body=text,
                adopting_words="bench",
                expected_body_hash=preview["body_hash"],
                owner="owner",
            )
            timings["supersede"].append((time.perf_counter() - started) * 1000)
    return timings


def run(sizes: list[int]) -> str:
    lines = [
        "## Ceremonies",
        "",
        f"Root and supersede on random notes of a synthetic graph ({ROUNDS} of each per size, "
        "fresh copy per size, real SQLite file with WAL). Milliseconds.",
        "",
        "| nodes | root p50 | root p90 | supersede p50 | supersede p90 |",
        "|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        t = _measure(n)
        lines.append(
            f"| {n:,} | {statistics.median(t['root']):.2f} | {_p(t['root'], 0.9):.2f} | "
            f"{statistics.median(t['supersede']):.2f} | {_p(t['supersede'], 0.9):.2f} |"
        )
    return "\n".join(lines) + "\n"
