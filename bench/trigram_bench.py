"""The trigram index (migration 0009) at size: how big it grows and how fast a substring query is.

A synthetic graph of N nodes is given N/20 extra notes in Japanese (random kana and kanji drawn
Zipf-like, as bench.synthetic draws words), which the insert trigger puts in the trigram table.
Queries are substrings of those notes: two characters (too short for trigrams: a scan of the
trigram table's own rows) and four (through the index). The worst case, every body in a
trigram index, is measured on a scratch table and reported beside it.
"""

from __future__ import annotations

import hashlib
import random
import statistics
import time

from django.db import connection

from bench.synthetic import _zipf_cumulative, graph_copy, use_database

# Common kanji and kana: enough variety that a four-character run is rare, as in real text.
_CHARS = (
    "日本東京大阪京都山川田中村人年月時間今朝夜雨雪風花木森海空赤青白黒金水火土食飲見行来話"
    "書読学校会社仕事家族友達先生電車駅道店料理茶魚肉野菜米酒旅行写真音楽映画本新古高安"
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"
    "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン"
)


def _japanese(rng: random.Random, length: int) -> str:
    weights = _zipf_cumulative(len(_CHARS))
    return "".join(rng.choices(_CHARS, cum_weights=weights, k=length)) + "。"


def _size_mb(prefix: str) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE %s", [prefix + "%"])
        return (cursor.fetchone()[0] or 0) / 1e6


def _add_japanese(count: int, rng: random.Random) -> list[str]:
    bodies = [_japanese(rng, rng.randint(20, 80)) for _ in range(count)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(id) FROM memory_node")
        start = cursor.fetchone()[0] + 1
        rows = [
            (start + i, body, hashlib.sha256(body.encode()).hexdigest(), "0" * 64)
            for i, body in enumerate(bodies)
        ]
        cursor.executemany(
            "INSERT INTO memory_node (id, body, body_hash, content_key, jurisdiction, kind, "
            "domain, signature, source, metadata, created_at, scroll_path, scroll_hash, "
            "access_count, permanent) VALUES (%s, %s, %s, %s, 'home', 'note', 'personal', "
            "'bench', '', '{}', datetime('now'), '', '', 0, 0)",
            rows,
        )
    return bodies


def measure(size: int) -> dict[str, float]:
    from memory.recall import recall
    from memory.vectors.embed import embed_missing

    path = graph_copy(size, "trigram")
    rng = random.Random(5)
    with use_database(path):
        bodies = _add_japanese(size // 20, rng)
        embed_missing(batch=2000)  # recall's vector stage runs as it would in use
        indexed_mb = _size_mb("memory_node_trigram")
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("CREATE VIRTUAL TABLE scratch_all USING fts5(body, tokenize='trigram')")
            cursor.execute("INSERT INTO scratch_all(rowid, body) SELECT id, body FROM memory_node")
        all_s = time.perf_counter() - started
        all_mb = _size_mb("scratch_all")
        with connection.cursor() as cursor:
            cursor.execute("SELECT sum(length(CAST(body AS BLOB))) FROM memory_node")
            text_mb = cursor.fetchone()[0] / 1e6
        timings: dict[int, list[float]] = {0: [], 2: [], 4: []}
        with connection.cursor() as cursor:  # the reference: Latin words, same db, same moment
            cursor.execute(
                "SELECT body FROM memory_node WHERE id <= %s ORDER BY random() LIMIT 100", [size]
            )
            for (body,) in cursor.fetchall():
                query = " ".join(body.split()[:3])
                recall(query, scope="both")
                t = time.perf_counter()
                recall(query, scope="both", limit=100)
                timings[0].append((time.perf_counter() - t) * 1000)
        hits = 0
        for length, found in timings.items():
            if not length:
                continue
            for body in rng.sample(bodies, 100):
                at = rng.randint(0, len(body) - length - 1)
                query = body[at : at + length]
                recall(query, scope="both")  # warm
                t = time.perf_counter()
                packets = recall(query, scope="both", limit=100)
                found.append((time.perf_counter() - t) * 1000)
                hits += all(query in p["excerpt"] for p in packets[:1]) and bool(packets)
    return {
        "cjk": len(bodies),
        "indexed_mb": indexed_mb,
        "all_mb": all_mb,
        "all_s": all_s,
        "text_mb": text_mb,
        "p50_2": statistics.median(timings[2]),
        "p50_4": statistics.median(timings[4]),
        "p50_words": statistics.median(timings[0]),
        "found": hits / 200,
    }


def section(sizes: list[int]) -> str:
    lines = [
        "### Scripts without spaces (trigram index)",
        "",
        "| nodes | of them Japanese | trigram index | if every body were indexed | all text "
        "| recall p50, 2-char query | 4-char query | 3 Latin words (same run) "
        "| best hit holds the query |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        m = measure(size)
        lines.append(
            f"| {size:,} | {m['cjk']:,} | {m['indexed_mb']:.1f} MB | {m['all_mb']:.0f} MB "
            f"(built in {m['all_s']:.1f} s) | {m['text_mb']:.0f} MB | {m['p50_2']:.2f} ms "
            f"| {m['p50_4']:.2f} ms | {m['p50_words']:.2f} ms | {m['found']:.0%} |"
        )
    lines += [
        "",
        "Only bodies holding a spaceless-script character are indexed (the trigger's WHEN), so "
        "the index grows with such text, not with the graph. A two-character query is too short "
        "for trigrams and scans the trigram table's own rows (the Japanese notes only). Limit "
        "100 for every query; the Latin-word column is the same recall on the same database in "
        "the same run, the yardstick for what the trigram list adds.",
    ]
    return "\n".join(lines) + "\n"
