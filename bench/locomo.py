"""LoCoMo dev as a recall test set, shared by the quality bench (bench/locomo_quality.py) and
the reranker's (bench/locomo_rerank.py).

The LoCoMo file (GROVE_LOCOMO_PATH, default ../shared/data/locomo-dev.json; evaluation only,
never copied into the repository) is ingested into a bench database through the importer and
slept once (sleep's steps as the product runs them: the fitted model, vectors, cross-links).
Every question of categories 1-4 with evidence is recalled within its conversation's domain
(scope both, limit 20); recall@k = the share of its evidence turns among the top k. A plain
BM25 baseline (FTS5 bm25 over an OR of all the question's words) is recalled the same way.

Importable before Django is set up (`python -m bench.locomo_rerank` sets it up in main): what
needs the models is imported where it is used.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import re
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db import connection

KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
Question = dict[str, Any]  # sample, question, evidence, category


def locomo_path() -> Path:
    default = Path(settings.BASE_DIR).parent / "shared" / "data" / "locomo-dev.json"
    return Path(os.environ.get("GROVE_LOCOMO_PATH", str(default)))


def _evidence(qa: dict[str, Any]) -> list[str]:
    # A few evidence entries pack several ids into one string ("D8:6; D9:17").
    ids: list[str] = []
    for item in qa.get("evidence") or []:
        ids.extend(re.findall(r"D\d+:\d+", str(item)))
    return list(dict.fromkeys(ids))


def questions(samples: list[dict[str, Any]]) -> list[Question]:
    """Categories 1-4 with evidence, in file order."""
    found = []
    for sample in samples:
        for qa in sample.get("qa", []):
            evidence = _evidence(qa)
            if qa.get("category") in CATEGORIES and evidence and qa.get("question"):
                found.append(
                    {
                        "sample": str(sample["sample_id"]),
                        "question": str(qa["question"]),
                        "evidence": evidence,
                        "category": qa["category"],
                    }
                )
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
            "WHERE memory_node_fts MATCH %s AND n.domain = %s AND n.kind = 'utterance' "
            "ORDER BY bm25(memory_node_fts) LIMIT %s",
            [expression, sample_id, limit],
        )
        return [row[0] for row in cursor.fetchall()]


def grove_recall(question: str, sample_id: str, limit: int) -> list[str]:
    from memory.recall import recall

    packets = recall(question, scope="both", domains=[sample_id], limit=limit, actor="bench")
    return [p["source"] for p in packets]


@contextlib.contextmanager
def memoised() -> Iterator[None]:
    """Recall's database reads, remembered while the grid runs: the bench writes nothing but
    RecallLog rows, so every setting sees the same answers, and after the first setting mostly
    the fusion itself is recomputed (dozens of settings in minutes on a shared machine).
    Reads by a list of ids are remembered per id, so the memory they take is bounded by the
    corpus, not by the number of settings times questions."""
    from memory import packets, recall, visibility
    from memory.recall import rank

    by_call = [
        (rank, "fts_candidates"),
        (rank, "date_candidates"),
        (rank, "trigram_candidates"),
        (rank, "_entity_neighbours"),
    ]
    by_id = [
        (rank, "_neighbours"),
        (rank, "_parents"),
        (visibility, "live_at"),  # answers a set of ids (Visibility.alive reads it)
        (rank, "lawful_trust"),
        (packets, "preview_rows"),
    ]
    from bench.embed_cache import cached

    saved = [(m, n, getattr(m, n)) for m, n in [*by_call, *by_id, (recall, "vector_search")]]
    for module, name in by_call:
        setattr(module, name, _remember(getattr(module, name)))
    recall.vector_search = _remember_waited(recall.vector_search)
    for module, name in by_id:
        setattr(module, name, _remember_each(getattr(module, name), as_set=name == "live_at"))
    try:
        with cached():  # and the questions' vectors, across runs
            yield
    finally:
        for module, name, func in saved:
            setattr(module, name, func)


def _remember(func: Callable[..., Any]) -> Callable[..., Any]:
    cache: dict[str, Any] = {}

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = repr((args, sorted(kwargs.items())))
        if key not in cache:
            cache[key] = func(*args, **kwargs)
        return copy.deepcopy(cache[key])

    return wrapper


def _remember_waited(func: Callable[..., Callable[[], Any]]) -> Callable[..., Callable[[], Any]]:
    """_remember for a function that returns the call that waits for its answer
    (recall.vector_search): the answer is what is kept."""
    remembered = _remember(lambda *args, **kwargs: func(*args, **kwargs)())
    return lambda *args, **kwargs: functools.partial(remembered, *args, **kwargs)


_ABSENT = object()


def _remember_each(func: Callable[..., Any], *, as_set: bool) -> Callable[..., Any]:
    """For a read of ids answering a dict by id (or, as_set, the set of those that qualify):
    one entry per id."""
    cache: dict[str, dict[int, Any]] = {}

    def wrapper(ids: Any, *args: Any, **kwargs: Any) -> Any:
        known = cache.setdefault(repr((args, sorted(kwargs.items()))), {})
        ids = list(dict.fromkeys(ids))
        missing = [i for i in ids if i not in known]
        answer: Any = func(missing, *args, **kwargs) if missing else ()
        for i in missing:
            known[i] = (i in answer) if as_set else answer.get(i, _ABSENT)
        if as_set:
            return {i for i in ids if known[i] is True}
        return {i: copy.deepcopy(known[i]) for i in ids if known[i] is not _ABSENT}

    return wrapper


def per_question(
    qs: list[Question], search: Callable[[str, str, int], list[str]]
) -> list[tuple[float, ...]]:
    """R@k (for each k of KS) of every question."""
    found = []
    for q in qs:
        sources = search(q["question"], q["sample"], max(KS))
        wanted = {f"{q['sample']}#{dia}" for dia in q["evidence"]}
        found.append(tuple(len(wanted & set(sources[:k])) / len(wanted) for k in KS))
    return found


def prepare_locomo() -> tuple[Path, list[Question]]:
    """A bench database holding the LoCoMo file, ingested and slept once. With
    GROVE_BENCH_REUSE=1 an existing one is reused (a quicker loop while tuning)."""
    from bench.embed_cache import cached
    from bench.synthetic import bench_dir, migrated, use_database
    from memory.importers.locomo import ingest
    from memory.sleep.run import run_sleep

    source = locomo_path()
    samples = json.loads(source.read_text(encoding="utf-8"))
    path = bench_dir() / "locomo.sqlite3"
    if path.exists() and os.environ.get("GROVE_BENCH_REUSE") == "1":
        return migrated(path), questions(samples)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with use_database(path):
        call_command("migrate", verbosity=0)
        ingest(source, tz="UTC")
        with cached():  # a slow model embeds the turns once, not once a run
            run_sleep(requested_by="bench")
    return path, questions(samples)


def mean_recall(rows: list[tuple[float, ...]], k: int) -> float:
    return statistics.fmean(r[KS.index(k)] for r in rows) if rows else float("nan")


def table_row(label: str, rows: list[tuple[float, ...]]) -> str:
    return (
        f"| {label} | "
        + " | ".join(f"{mean_recall(rows, k):.3f}" for k in KS)
        + f" | {len(rows)} |"
    )


def breakdown(qs: list[Question], named: dict[str, list[tuple[float, ...]]]) -> list[str]:
    """R@k by category and by single- vs multi-evidence, for each named ranking."""
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(qs):
        groups.setdefault(f"{q['category']} {CATEGORIES[q['category']]}", []).append(i)
    for i, q in enumerate(qs):
        groups.setdefault("multi" if len(q["evidence"]) > 1 else "single", []).append(i)
    order = [*sorted(g for g in groups if g[0].isdigit()), "single", "multi"]
    lines = [
        "| questions | ranking | " + " | ".join(f"R@{k}" for k in KS) + " | n |",
        "|---|---|" + "---|" * (len(KS) + 1),
    ]
    for group in order:
        for name, rows in named.items():
            lines.append(f"| {group} " + table_row(name, [rows[i] for i in groups[group]]))
    return lines
