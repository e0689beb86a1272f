"""What the e5 embedder costs beside the hashing one: embedding speed, recall latency, memory and
disk, on the synthetic graphs (bench.synthetic) recall's own bench uses.

Each (size, embedder) runs in a child process of its own (`python -m bench.semantic_bench SIZE
EMBEDDER`), so its peak RSS is its own: a copy of the cached graph is embedded in full (timed,
wall and CPU), the vector index built where recall would use one (GROVE_ANN_MIN_ROWS), then 200
recalls are timed as bench.recall_bench times them. The embedding rate is also timed on a fixed
sample of bodies (synthetic ones, and LoCoMo turns when the file is there: real sentences, a
third as many tokens). e5 sizes above GROVE_BENCH_E5_MAX (10,000) are skipped: at the measured
rate their embedding alone is hours of CPU on this machine. With GROVE_BENCH_REUSE=1 a copy an
earlier run left is reused, and only what it lacks is embedded (embed_missing resumes).
The machine is shared: each row says its load average, and CPU seconds beside wall seconds.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

EMBEDDERS = {
    "hashing": "memory.vectors.embed.HashingEmbedder",
    "e5": "memory.vectors.e5.E5Embedder",
}
QUERIES = 200
SAMPLE = 256  # bodies timed for the embedding rate


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _graph(size: int, tag: str) -> Path:
    from bench.synthetic import bench_dir, graph_copy, migrated

    kept = bench_dir() / f"semantic-{tag}-{size}.sqlite3"
    if os.environ.get("GROVE_BENCH_REUSE") == "1" and kept.exists():
        return migrated(kept)
    return graph_copy(size, f"semantic-{tag}")


def _bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _rate(embedder: Any, texts: list[str]) -> dict[str, float]:
    embedder.embed(texts[:8])  # warm
    wall, cpu = time.perf_counter(), time.process_time()
    embedder.embed(texts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"per_s_wall": len(texts) / wall, "per_s_cpu": len(texts) / cpu}


def _locomo_turns(limit: int) -> list[str]:
    from bench.locomo import locomo_path

    path = locomo_path()
    if not path.exists():
        return []
    turns = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        for key, session in sample["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [turn["text"] for turn in session]
    return turns[:limit]


def child(size: int, tag: str) -> dict[str, Any]:
    """One (size, embedder): embed, index, recall; the numbers as a dict."""
    from django.conf import settings
    from django.db import connection

    from bench.synthetic import use_database
    from memory.recall import query_terms, recall
    from memory.vectors.embed import embed_missing, embed_query, get_embedder
    from memory.vectors.index import index_dir, sync_index

    load = os.getloadavg()[0]
    path = _graph(size, tag)
    out: dict[str, Any] = {"size": size, "embedder": tag}
    with use_database(path):
        embedder = get_embedder()
        out["model"] = embedder.name
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, body FROM memory_node WHERE id %% %s = 7 ORDER BY id LIMIT 300",
                [max(1, size // 300)],
            )
            sample = cursor.fetchall()
        out["rate_synthetic"] = _rate(embedder, [body for _, body in sample[:SAMPLE]])
        if turns := _locomo_turns(SAMPLE):
            out["rate_locomo"] = _rate(embedder, turns)
        wall, cpu = time.perf_counter(), time.process_time()
        out["embedded"] = embed_missing(batch=2000)
        out["embed_wall_s"] = time.perf_counter() - wall
        out["embed_cpu_s"] = time.process_time() - cpu
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        wall = time.perf_counter()
        index = sync_index(model=embedder.name, dim=embedder.dim)
        out["index_s"] = time.perf_counter() - wall
        out["indexed"] = index is not None
        rng = __import__("random").Random(11)
        queries = []
        for _, body in sample:
            words = query_terms(body)
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 5)))))
        for q in queries[:20]:  # warm-up: caches, the index's lists, the page cache
            recall(q, scope="both")
        wall_ms, cpu_ms, embed_ms = [], [], []
        for q in queries[:QUERIES]:
            wall, cpu = time.perf_counter(), time.process_time()
            recall(q, scope="both")
            wall_ms.append((time.perf_counter() - wall) * 1000)
            cpu_ms.append((time.process_time() - cpu) * 1000)
            wall = time.perf_counter()
            embed_query(embedder, q)
            embed_ms.append((time.perf_counter() - wall) * 1000)
        out |= {
            "p50": statistics.median(wall_ms),
            "p95": _percentile(wall_ms, 0.95),
            "cpu_p50": statistics.median(cpu_ms),
            "query_embed_p50": statistics.median(embed_ms),
        }
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = 'memory_vector' OR "
                "name IN (SELECT name FROM sqlite_master WHERE tbl_name = 'memory_vector')"
            )
            out["vectors_bytes"] = cursor.fetchone()[0]
        out["index_bytes"] = _bytes(index_dir(embedder.name))
        out["ann_min_rows"] = settings.GROVE_ANN_MIN_ROWS
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["load"] = (load + os.getloadavg()[0]) / 2
    return out


def _run_child(size: int, tag: str) -> dict[str, Any]:
    env = {**os.environ, "GROVE_EMBEDDER": EMBEDDERS[tag], "GROVE_EMBEDDER_PATH": ""}
    done = subprocess.run(
        [sys.executable, "-m", "bench.semantic_bench", str(size), tag],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"semantic bench {size} {tag} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(sizes: list[int]) -> str:
    e5_max = int(os.environ.get("GROVE_BENCH_E5_MAX", "10000"))
    results = []
    for size in sizes:
        for tag in EMBEDDERS:
            if tag == "e5" and size > e5_max:
                continue
            print(f"  {size:,} {tag}", flush=True)
            results.append(_run_child(size, tag))
    lines = [
        "## Semantic embedder (e5) against hashing: cost",
        "",
        "| size | embedder | recall p50 ms | p95 ms | recall CPU p50 ms | query embedding "
        "p50 ms | embedding, synthetic bodies/s (CPU) | LoCoMo turns/s (CPU) | 10k bodies, "
        "CPU s | this run embedded, wall s (CPU s) | peak RSS MB | vectors table MB | index "
        "files MB | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        synthetic, locomo = r["rate_synthetic"], r.get("rate_locomo")
        cells = [
            f"{r['size']:,}",
            r["embedder"],
            f"{r['p50']:.1f}",
            f"{r['p95']:.1f}",
            f"{r['cpu_p50']:.1f}",
            f"{r['query_embed_p50']:.2f}",
            f"{synthetic['per_s_wall']:.0f} ({synthetic['per_s_cpu']:.0f})",
            f"{locomo['per_s_wall']:.0f} ({locomo['per_s_cpu']:.0f})" if locomo else "-",
            f"{10_000 / synthetic['per_s_cpu']:.0f}",
            f"{r['embedded']:,}, {r['embed_wall_s']:.0f} ({r['embed_cpu_s']:.0f})",
            f"{r['peak_rss_mb']:.0f}",
            f"{r['vectors_bytes'] / 2**20:.1f}",
            f"{r['index_bytes'] / 2**20:.1f}",
            f"{r['load']:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    skipped = [s for s in sizes if s > e5_max]
    if skipped:
        lines += [
            "",
            f"e5 at {', '.join(f'{s:,}' for s in skipped)} not run (GROVE_BENCH_E5_MAX="
            f"{e5_max:,}): see the 10k bodies CPU column for what embedding them would take.",
        ]
    lines += ["", f"(`python -m bench --only semantic --sizes {','.join(map(str, sizes))}`)"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grove.settings")
    import django

    django.setup()
    print(json.dumps(child(int(sys.argv[1]), sys.argv[2])))
