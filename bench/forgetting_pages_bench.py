"""Forgetting at 100k: the pages and calls the owner and agents use on what sleep lets go.

Two stores per size, each a fresh copy of the cached synthetic graph (bench.synthetic), embedded:
- *pending*: the graph as built, where the next sleep would let go of about 30% (at 100k:
  30,005 nodes; unread, old and held by nothing live). Measured: the pending decays page
  (/review/decays/, grouped), its tabs, a group's nodes, a filter by words, and its first view
  after a change (a keep before each fetch: the marks and groups worked out again). Then 5% of
  its nodes are decayed, and an agent's dig and recall compared there.
- *forgotten*: 70% of the nodes decayed through the audit writer, a few of them sealed or
  rejected first (their words must never match). Measured: /forgotten/ word search, and an
  agent's dig (GET /api/v1/dig) beside its recall (GET /api/v1/recall) through the API.

Pages and calls go through Django's test Client (middleware, view, queries, template or JSON:
the whole server side), 30 timed after 3 warm-ups, each with other words or another group.
Targets: every page p95 <= 100 ms; a dig's p50 at most twice recall's.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from urllib.parse import quote_plus

from django.db import transaction
from django.test import Client
from django.utils import timezone

from bench.synthetic import DOMAINS, _vocabulary, graph_copy, use_database

TARGET_P95_MS = 100.0
DIG_RATIO = 2.0
REPEATS = 30
WARM = 3
DECAYED_SHARE = 0.7


Samples = list[tuple[float, float]]  # (wall ms, cpu ms) a fetch


def _time(
    client: Client,
    path: Callable[[int], str],
    *,
    before: Callable[[int], object] | None = None,
    **headers: str,
) -> Samples:
    """Wall and CPU time of each fetch (CPU: this process's, which runs the whole server side
    and SQLite; on a shared machine the wall time also counts waiting for a core)."""
    samples = []
    for i in range(REPEATS + WARM):
        url = path(i)
        if before is not None:
            before(i)
        started, cpu = time.perf_counter(), time.process_time()
        response = client.get(url, **headers)
        elapsed = (time.perf_counter() - started) * 1000
        used = (time.process_time() - cpu) * 1000
        if response.status_code != 200:
            raise AssertionError(f"{url} answered {response.status_code}")
        if i >= WARM:
            samples.append((elapsed, used))
    return samples


def _api_pair(words: list[str], label: str) -> list[tuple[str, Samples]]:
    """An agent's recall and dig of the same words, alternated in rounds of 10 so that a slower
    minute of the shared machine falls on both."""
    from memory.tokens import create_token

    _token, secret = create_token(name=f"bench-agent-{label.split('%')[0]}", domains=DOMAINS)
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    agent = Client(HTTP_HOST="localhost")

    def api(kind: str) -> Callable[[int], str]:
        return lambda i: f"/api/v1/{kind}?q={quote_plus(words[i])}&scope=both&limit=10"

    recall: Samples = []
    dig: Samples = []
    for _ in range(3):
        recall += _time(agent, api("recall"), **bearer)[:10]
        dig += _time(agent, api("dig"), **bearer)[:10]
    return [(f"API recall, {label}", recall), (f"API dig, {label}", dig)]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _owner() -> Client:
    from dashboard.owner import ensure_owner

    # localhost: outside tests "testserver" is not an allowed host (grove/settings.py).
    client = Client(HTTP_HOST="localhost")
    client.force_login(ensure_owner())
    return client


def _words(rng: random.Random) -> list[str]:
    # Words of middling frequency: each matches hundreds of nodes, as a remembered word does.
    vocab = _vocabulary(random.Random(7))
    return [" ".join(rng.sample(vocab[20:400], 2)) for _ in range(REPEATS + WARM)]


def _pending_rows(n: int, rng: random.Random) -> list[tuple[str, Samples]]:
    from memory import forgetting
    from memory.vectors.embed import embed_missing

    path = graph_copy(n, "forgetting-pending")
    with use_database(path):
        embed_missing(batch=2000)
        pending = forgetting.pending_ids()[0]
        print(f"  {n:,}: {len(pending):,} pending at the next sleep", flush=True)
        groups = forgetting.pending_groups(pending, {})
        origins = [g["origin"] for g in groups[:50] if g["origin"] is not None]
        words = _words(rng)
        client = _owner()
        pages: list[tuple[str, Callable[[int], str]]] = [
            (f"pending decays, grouped ({len(pending):,} pending)", lambda i: "/review/decays/"),
            ("pending decays, 90-day tab", lambda i: "/review/decays/?horizon=90"),
            (
                "pending decays, one group's nodes",
                lambda i: f"/review/decays/?origin={origins[i % len(origins)]}",
            ),
            (
                "pending decays, filtered by a word",
                lambda i: f"/review/decays/?words={quote_plus(words[i].split()[0])}",
            ),
        ]
        rows = [(name, _time(client, paths)) for name, paths in pages]
        # The first view after a change: each fetch follows a keep of another pending node
        # (an event), so the marks and groups are worked out again.
        kept = pending[-(REPEATS + WARM) :]
        rows.append(
            (
                "pending decays, first view after a keep",
                _time(
                    client,
                    lambda i: "/review/decays/",
                    before=lambda i: forgetting.keep(kept[i], actor="owner"),
                ),
            )
        )
        _forget(n, rng, share=0.05, hidden=0)
        return [*rows, *_api_pair(words, "5% decayed")]


def _forget(n: int, rng: random.Random, *, share: float, hidden: int) -> list[int]:
    """Decay `share` of the nodes through the audit writer, after sealing and rejecting
    `hidden` of them each (their words must stay out of every search)."""
    from memory import audit
    from memory.models import Node
    from review.ceremony import reject, seal

    ids = list(Node.objects.values_list("id", flat=True))
    decayed = rng.sample(ids, int(n * share))
    for node_id in decayed[:hidden]:
        seal(node_id, owner="owner", reason="bench")
    for node_id in decayed[hidden : 2 * hidden]:
        reject(node_id, owner="owner", reason="bench")
    with transaction.atomic():
        Node.objects.filter(pk__in=decayed).update(decayed_at=timezone.now())
        audit.record_many("decayed", decayed, actor="sleep", reason="age_no_access")
    return decayed


def _forgotten_rows(n: int, rng: random.Random) -> list[tuple[str, Samples]]:
    from memory.vectors.embed import embed_missing

    path = graph_copy(n, "forgetting-forgotten")
    with use_database(path):
        embed_missing(batch=2000)
        decayed = _forget(n, rng, share=DECAYED_SHARE, hidden=20)
        print(f"  {n:,}: {len(decayed):,} decayed", flush=True)
        words = _words(rng)
        client = _owner()
        rows = [
            (
                f"forgotten, word search ({len(decayed):,} decayed)",
                _time(client, lambda i: f"/forgotten/?q={quote_plus(words[i])}"),
            ),
            (
                "forgotten, one word, page 2",
                _time(client, lambda i: f"/forgotten/?q={quote_plus(words[i].split()[0])}&page=2"),
            ),
        ]
        return [*rows, *_api_pair(words, "70% decayed")]


def run(sizes: list[int]) -> str:
    lines = [
        "## Forgetting pages at 100k",
        "",
        "Server time (Django test Client: middleware, view, queries, template or JSON) on a "
        "fresh copy of the synthetic graph per store, embedded: *pending* as built (about 30% "
        "due at the next sleep; then 5% of its nodes decayed for the API rows), *forgotten* "
        "with 70% of the nodes decayed through the audit writer (20 sealed and 20 rejected "
        f"first). {REPEATS} fetches each after {WARM} warm-ups, other words or another group "
        "each time; recall and dig alternate in rounds of 10. CPU: the process's own time per "
        "fetch (server and SQLite; the wall time also counts waiting for a shared core). "
        f"Targets: p95 <= {TARGET_P95_MS:.0f} ms a page; a dig's p50 at most {DIG_RATIO:g}x "
        "recall's.",
        "",
        "| nodes | page or call | p50 ms | p95 ms | cpu p50 ms | target |",
        "|---:|---|---:|---:|---:|---|",
    ]
    for n in sizes:
        rng = random.Random(n)
        measured = [*_pending_rows(n, rng), *_forgotten_rows(n, rng)]
        recall_p50 = 0.0
        for name, samples in measured:
            walls, cpus = [w for w, _ in samples], [c for _, c in samples]
            p50, p95, cpu = statistics.median(walls), _pct(walls, 0.95), statistics.median(cpus)
            if name.startswith("API recall"):
                recall_p50, ok = p50, "-"
            elif name.startswith("API dig"):
                ratio = p50 / recall_p50 if recall_p50 else 0.0
                ok = f"{ratio:.2f}x recall: " + ("ok" if ratio <= DIG_RATIO else "**over**")
            else:
                ok = "ok" if p95 <= TARGET_P95_MS else "**over**"
            lines.append(f"| {n:,} | {name} | {p50:.1f} | {p95:.1f} | {cpu:.1f} | {ok} |")
            print(f"  {n:,} {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms, cpu {cpu:.1f}", flush=True)
    return "\n".join(lines) + "\n"
