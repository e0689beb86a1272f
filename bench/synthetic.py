"""Synthetic graphs for benchmarks: N nodes with edges, built once per size and copied per use.

Nodes are bulk-inserted with raw SQL (the write path's per-node checks are what the write
benchmarks measure, not what a 100k-node fixture should spend minutes on); every database
constraint and trigger still applies, so the FTS index is filled by its trigger.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import json
import random
import shutil
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.db import connection

from memory.audit import metadata_hash
from memory.chain import GENESIS, event_digest
from memory.write import content_key_of

WORDS_SEED = 7
DOMAINS = ["personal", "work", "health", "garden"]


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
    return sorted(words)


@functools.cache
def _zipf_cumulative(size: int, s: float = 1.05) -> list[float]:
    return list(itertools.accumulate(1.0 / (rank**s) for rank in range(1, size + 1)))


def sentence(rng: random.Random, vocab: list[str], length: int) -> str:
    # Zipf over the vocabulary, as in real text: the commonest word is ~10% of all words
    # (English "the" is ~6%). A steeper draw makes every pair of notes look alike.
    weights = _zipf_cumulative(len(vocab))
    return " ".join(rng.choices(vocab, cum_weights=weights, k=length)).capitalize() + "."


def bench_dir() -> Path:
    path = Path(settings.DATA_DIR) / "bench"
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def use_database(path: Path | str):
    """Point Django's default connection at another SQLite file (or PostgreSQL database name)
    for the duration."""
    connection.close()
    old = connection.settings_dict["NAME"]
    connection.settings_dict["NAME"] = str(path)
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict["NAME"] = old


def migrated(path: Path) -> Path:
    """`path` with every migration applied: a copy an earlier run left (GROVE_BENCH_REUSE=1) may
    predate one, and the code may name an index it adds (INDEXED BY fails without it)."""
    with use_database(path):
        call_command("migrate", verbosity=0)
    return path


def build_graph(path: Path, n_nodes: int, *, seed: int = 1, now: datetime | None = None) -> None:
    """Create a migrated database at `path` holding `n_nodes` nodes and about 1.5 edges each.

    One import node per 200 nodes (a "file"), notes derived from it, a few cites and responds_to
    between notes; store clock spread over the last two years; a third have a referent_time.
    """
    if path.exists():
        path.unlink()
    now = now or datetime.now(UTC)
    with use_database(path):
        call_command("migrate", verbosity=0)
    node_rows, edge_rows = _graph_rows(
        random.Random(seed), _vocabulary(random.Random(WORDS_SEED)), n_nodes, now
    )
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    with db:
        db.executemany(
            """INSERT INTO memory_node (id, body, body_hash, content_key, jurisdiction, kind,
               domain, signature, source, metadata, created_at, referent_time, scroll_path,
               scroll_offset, scroll_hash, access_count, last_accessed_at, permanent,
               permanent_at, decayed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
            node_rows,
        )
        db.executemany(
            """INSERT OR IGNORE INTO memory_edge (from_node_id, to_node_id, kind, weight,
               created_at, created_by) VALUES (?,?,?,?,?,?)""",
            edge_rows,
        )
        db.executemany(
            """INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail,
               chain_hash) VALUES (?,?,?,?,?,?,?,?)""",
            _arrivals(node_rows),
        )
        # Reads on as many days as reads, up to three (the promotion rule needs three days).
        db.execute("UPDATE memory_node SET read_days = MIN(access_count, 3)")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # No ANALYZE: a store never has statistics, and the ones taken here (every node live, every
    # event an arrival) steered the planner as no owner's database would.
    db.close()


def _graph_rows(
    rng: random.Random, vocab: list[str], n_nodes: int, now: datetime
) -> tuple[list[tuple], list[tuple]]:
    """The node rows and edge rows of the graph, drawn from `rng` in node order (the draws'
    order is the graph: keep it, or the same seed builds another graph)."""
    node_rows, edge_rows = [], []
    current_import = None
    span = 730 * 86400
    for i in range(1, n_nodes + 1):
        created = now - timedelta(seconds=span * (1 - i / n_nodes))
        if i == 1 or rng.random() < 1 / 200:
            kind, jurisdiction, source = "import", "wild", f"notes/file-{i}.md"
            current_import = i
        else:
            kind = rng.choice(["note", "note", "note", "journal", "inference", "hearsay"])
            jurisdiction = "home" if kind in ("note", "journal", "inference") else "wild"
            source = ""
        body = " ".join(sentence(rng, vocab, rng.randint(6, 18)) for _ in range(rng.randint(1, 3)))
        body = f"{body} #{i}"
        referent = (
            (created - timedelta(days=rng.randint(0, 400))).isoformat(" ")
            if (rng.random() < 0.33)
            else None
        )
        node_rows.append(_node_row(rng, i, body, kind, jurisdiction, source, created, referent))
        if kind != "import":
            edge_rows.append(
                (i, current_import, "derived_from", 1.0, created.isoformat(" "), "bench")
            )
            if i > 10 and rng.random() < 0.5:
                target = rng.randint(max(1, i - 500), i - 1)
                edge_rows.append(
                    (
                        i,
                        target,
                        rng.choice(["cites", "responds_to"]),
                        1.0,
                        created.isoformat(" "),
                        "bench",
                    )
                )
    return node_rows, edge_rows


def _node_row(
    rng: random.Random,
    i: int,
    body: str,
    kind: str,
    jurisdiction: str,
    source: str,
    created: datetime,
    referent: str | None,
) -> tuple:
    """One memory_node row, in the INSERT's column order; draws its domain, then its reads."""
    return (
        i,
        body,
        hashlib.sha256(body.encode()).hexdigest(),
        content_key_of(body),
        jurisdiction,
        kind,
        DOMAINS[i % len(DOMAINS)] if rng.random() < 0.3 else "personal",
        "bench",
        source,
        "{}",
        created.isoformat(" "),
        referent,
        "",
        None,
        "",
        rng.choice([0, 0, 0, 0, 1, 2, 3, 5, 8]),
        None,
        0,
        None,
        None,
    )


def _arrivals(node_rows: list[tuple]) -> list[tuple]:
    """Each node's `arrived` event, hash-chained as the write path would write it."""
    rows, prev = [], GENESIS
    for node_id, body, body_hash, key, jur, kind, domain, sig, source, _meta, created, ref in (
        row[:12] for row in node_rows
    ):
        at = datetime.fromisoformat(created).astimezone(UTC).replace(tzinfo=None).isoformat(" ")
        snapshot = {
            "body_hash": body_hash,
            "kind": kind,
            "jurisdiction": jur,
            "domain": domain,
            "signature": sig,
            "source": source,
            "created_at": created,
            "referent_time": ref,
            "excerpt": body[:280],
            "body_chars": len(body),
        }
        detail = {
            "body_hash": body_hash,
            "content_key": key,
            "metadata_hash": metadata_hash({}),
            "origins": [],
        }
        prev = event_digest(
            prev=prev,
            at=at,
            kind="arrived",
            node_id=node_id,
            actor=sig,
            reason="",
            related_node_id=None,
            snapshot=snapshot,
            detail=detail,
            token_id=None,
        )
        rows.append(
            (at, "arrived", node_id, sig, "", json.dumps(snapshot), json.dumps(detail), prev)
        )
    return rows


def graph_copy(n_nodes: int, name: str, *, seed: int = 1) -> Path:
    """A fresh copy of the cached n-node graph, for a benchmark to change as it likes."""
    cached = bench_dir() / f"graph-{n_nodes}-s{seed}.sqlite3"
    if not cached.exists():
        started = time.perf_counter()
        build_graph(cached, n_nodes, seed=seed)
        print(f"  built {n_nodes:,}-node graph in {time.perf_counter() - started:.1f}s")
    target = bench_dir() / f"{name}-{n_nodes}.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(cached, target)
    with use_database(target):  # a graph cached before a new migration catches up here
        call_command("migrate", verbosity=0)
    with contextlib.closing(sqlite3.connect(target)) as db, db:
        # Statistics a graph cached before they were dropped still holds (see build_graph).
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone():
            db.execute("DELETE FROM sqlite_stat1")
    return target
