"""Recall benchmarks: retrieval quality on LoCoMo (dev) and speed on synthetic graphs.

Quality: the LoCoMo file (GROVE_LOCOMO_PATH, default ../shared/data/locomo-dev.json; evaluation
only, never copied into the repository) is ingested into a bench database through the importer,
embedded, and every question of categories 1-4 with evidence is recalled within its
conversation's domain (scope both, limit 20). recall@k = the share of the question's evidence
turns among the top k, averaged over questions. A plain BM25 baseline (FTS5 bm25 over an OR of
all the question's words, utterances of the same conversation) is computed in the same run.

Speed: synthetic graphs (bench.synthetic) embedded in full, then recall p50/p95, read and walk
step latencies, and the process's peak resident memory.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db import connection

from bench.synthetic import bench_dir, use_database

KS = (5, 10, 20)
TARGET_R10 = 0.70
TARGET_P50_MS = {10_000: 5.0, 100_000: 25.0, 1_000_000: 25.0}
TARGET_P95_MS = {1_000_000: 60.0}
TARGET_PEAK_MB = 500


def locomo_path() -> Path:
    default = Path(settings.BASE_DIR).parent / "shared" / "data" / "locomo-dev.json"
    return Path(os.environ.get("GROVE_LOCOMO_PATH", str(default)))


def _evidence(qa: dict[str, Any]) -> list[str]:
    # A few evidence entries pack several ids into one string ("D8:6; D9:17").
    ids: list[str] = []
    for item in qa.get("evidence") or []:
        ids.extend(re.findall(r"D\d+:\d+", str(item)))
    return list(dict.fromkeys(ids))


def questions(samples: list[dict[str, Any]]) -> list[tuple[str, str, list[str]]]:
    """(sample_id, question, evidence dia_ids) for categories 1-4 with evidence."""
    found = []
    for sample in samples:
        for qa in sample.get("qa", []):
            evidence = _evidence(qa)
            if qa.get("category") in (1, 2, 3, 4) and evidence and qa.get("question"):
                found.append((str(sample["sample_id"]), str(qa["question"]), evidence))
    return found


def plain_bm25(question: str, sample_id: str, limit: int) -> list[str]:
    """The baseline: FTS5 bm25 over an OR of every word of the question (no stopwords, no
    vectors, no graph, no recency), utterances of this conversation only."""
    words = re.findall(r"\w+", question.casefold())
    if not words:
        return []
    expression = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT n.source FROM memory_node_fts f JOIN memory_node n ON n.id = f.rowid "
            "WHERE memory_node_fts MATCH ? AND n.domain = ? AND n.kind = 'utterance' "
            "ORDER BY bm25(memory_node_fts) LIMIT ?",
            [expression, sample_id, limit],
        )
        return [row[0] for row in cursor.fetchall()]


def grove_recall(question: str, sample_id: str, limit: int) -> list[str]:
    from memory.recall import recall

    packets = recall(question, scope="both", domains=[sample_id], limit=limit, actor="bench")
    return [p["source"] for p in packets]


def score(
    qs: list[tuple[str, str, list[str]]], search: Callable[[str, str, int], list[str]]
) -> dict[int, float]:
    totals = dict.fromkeys(KS, 0.0)
    for sample_id, question, evidence in qs:
        sources = search(question, sample_id, max(KS))
        wanted = {f"{sample_id}#{dia}" for dia in evidence}
        for k in KS:
            totals[k] += len(wanted & set(sources[:k])) / len(wanted)
    return {k: totals[k] / max(len(qs), 1) for k in KS}


def prepare_locomo() -> tuple[Path, list[tuple[str, str, list[str]]]]:
    """A fresh bench database holding the LoCoMo file, ingested and embedded."""
    from memory.embed import embed_missing
    from memory.importers.locomo import ingest

    source = locomo_path()
    samples = json.loads(source.read_text(encoding="utf-8"))
    path = bench_dir() / "locomo.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with use_database(path):
        call_command("migrate", verbosity=0)
        ingest(source, tz="UTC")
        embed_missing()
    return path, questions(samples)


def quality() -> str:
    source = locomo_path()
    if not source.exists():
        return f"(LoCoMo file {source} not found; set GROVE_LOCOMO_PATH)\n"
    started = time.perf_counter()
    path, qs = prepare_locomo()
    prepared = time.perf_counter() - started
    with use_database(path):
        started = time.perf_counter()
        ours = score(qs, grove_recall)
        took = (time.perf_counter() - started) / max(len(qs), 1) * 1000
        baseline = score(qs, plain_bm25)
        indexed = _with_vector_index(lambda: score(qs, grove_recall))
    lines = [
        f"LoCoMo dev ({source.name}): {len(qs)} questions (categories 1-4 with evidence); "
        f"ingest + embed {prepared:.1f}s; recall {took:.1f} ms per question.",
        "",
        "| ranking | R@5 | R@10 | R@20 |",
        "|---|---|---|---|",
        "| plain BM25 (FTS5 bm25, OR of all words) | "
        + " | ".join(f"{baseline[k]:.3f}" for k in KS)
        + " |",
        "| Grove recall (hybrid) | " + " | ".join(f"{ours[k]:.3f}" for k in KS) + " |",
        "| Grove recall, vector stage through the vector index (forced on) | "
        + " | ".join(f"{indexed[k]:.3f}" for k in KS)
        + " |",
        "",
        f"Target R@10 >= {TARGET_R10:.2f}: "
        + ("met" if ours[10] >= TARGET_R10 else f"missed by {TARGET_R10 - ours[10]:.3f}")
        + ".",
    ]
    return "\n".join(lines) + "\n"


def _everything():
    from memory.visibility import Visibility

    return Visibility.of(domains=None, scope="both", as_of=None)


def _with_vector_index(run: Callable[[], dict[int, float]]) -> dict[int, float]:
    """`run` with recall's vector stage served by the vector index (built here as sleep would),
    whatever the graph's size: the index must not cost retrieval quality."""
    import shutil

    from django.test import override_settings

    from memory.embed import get_embedder
    from memory.vector_index import index_dir, sync_index

    embedder = get_embedder()
    with override_settings(GROVE_ANN_MIN_ROWS=0):
        shutil.rmtree(index_dir(embedder.name), ignore_errors=True)
        sync_index(model=embedder.name, dim=embedder.dim)
        try:
            return run()
        finally:
            shutil.rmtree(index_dir(embedder.name), ignore_errors=True)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def speed(size: int) -> dict[str, float]:
    from bench.sleep_bench import fresh_graph
    from memory.embed import embed_missing, get_embedder
    from memory.read import read
    from memory.recall import query_terms, recall, vector_matrix
    from memory.vector_index import current, sync_index
    from memory.walk import around, open_walk, step

    path = fresh_graph(size, "recall")
    rng = random.Random(11)
    with use_database(path):
        started = time.perf_counter()
        embed_missing(batch=2000)
        embed_s = time.perf_counter() - started
        with connection.cursor() as cursor:
            # Embedding is sleep's work; folding its WAL back is not a cost of recall.
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        embedder = get_embedder()
        started = time.perf_counter()
        index = sync_index(model=embedder.name, dim=embedder.dim)  # sleep's work, timed apart
        index_s = time.perf_counter() - started
        started = time.perf_counter()
        index = current(model=embedder.name, dim=embedder.dim)
        if index is not None:
            index.search(embedder.embed(["warm"])[0], _everything(), 1)  # its int8 lists
        vector_matrix(after_id=index.last_vector_id if index else 0)
        cache_s = time.perf_counter() - started
        with connection.cursor() as cursor:
            cursor.execute("SELECT id, body FROM memory_node ORDER BY random() LIMIT 300")
            sample = cursor.fetchall()
        queries = []
        for _, body in sample:
            words = query_terms(body)
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 5)))))
        for q in queries[:20]:  # warm-up: caches, statement cache, page cache
            recall(q, scope="both")
        recall_ms = []
        for q in queries:
            t = time.perf_counter()
            recall(q, scope="both")
            recall_ms.append((time.perf_counter() - t) * 1000)
        read_ms = []
        for node_id, _ in sample[:200]:
            t = time.perf_counter()
            read(node_id)
            read_ms.append((time.perf_counter() - t) * 1000)
        step_ms = []
        for node_id, _ in sample[:100]:
            token = open_walk(node_id, holder="bench")
            routes = around(token, holder="bench")["routes"]
            if not routes:
                continue
            route = routes[0]
            t = time.perf_counter()
            step(token, holder="bench", direction=route["direction"], target=route["target"])
            step_ms.append((time.perf_counter() - t) * 1000)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "embed_s": embed_s,
        "index_s": index_s,
        "cache_s": cache_s,
        "p50": statistics.median(recall_ms),
        "p95": _percentile(recall_ms, 0.95),
        "read": statistics.median(read_ms),
        "step": statistics.median(step_ms) if step_ms else float("nan"),
        "peak_mb": peak_mb,
    }


def run(sizes: list[int]) -> str:
    parts = ["## Recall", "", "### Retrieval quality", "", quality(), "### Speed", ""]
    parts += [
        "| nodes | embed all | build index | load index or matrix | recall p50 | recall p95 "
        "| read p50 | walk step p50 | peak RSS (process) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for size in sizes:
        m = speed(size)
        parts.append(
            f"| {size:,} | {m['embed_s']:.1f} s | {m['index_s']:.1f} s | "
            f"{m['cache_s'] * 1000:.0f} ms | "
            f"{m['p50']:.2f} ms | {m['p95']:.2f} ms | {m['read']:.2f} ms | {m['step']:.2f} ms | "
            f"{m['peak_mb']:.0f} MB |"
        )
        if size in TARGET_P50_MS:
            target = TARGET_P50_MS[size]
            verdicts.append(
                f"recall p50 at {size:,}: target <= {target:g} ms, "
                + ("met" if m["p50"] <= target else f"missed by {m['p50'] - target:.2f} ms")
            )
        if size in TARGET_P95_MS:
            target = TARGET_P95_MS[size]
            verdicts.append(
                f"recall p95 at {size:,}: target <= {target:g} ms, "
                + ("met" if m["p95"] <= target else f"missed by {m['p95'] - target:.2f} ms")
            )
        if size == 100_000:
            verdicts.append(
                f"peak memory at 100,000: target <= {TARGET_PEAK_MB} MB, "
                + (
                    "met"
                    if m["peak_mb"] <= TARGET_PEAK_MB
                    else f"missed by {m['peak_mb'] - TARGET_PEAK_MB:.0f} MB"
                )
            )
    parts += ["", *(f"- {v}" for v in verdicts), ""]
    parts.append(
        "Queries are 2-5 content words drawn from random node bodies; scope both, all domains, "
        "limit 10; every recall writes its RecallLog row. Peak RSS is the whole bench process "
        "(the LoCoMo run and smaller sizes included), so it bounds the 100k figure from above."
    )
    return "\n".join(parts) + "\n"
