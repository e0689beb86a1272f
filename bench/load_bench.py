"""Load on both engines: 16 concurrent API writers across 2 web processes while a full sleep runs.

For each size and each engine (SQLite always; PostgreSQL when GROVE_BENCH_PG_URL names a server
where this user may create databases, e.g. inside `.ci/postgres.sh`): the cached synthetic graph
(bench/synthetic.py) is copied (SQLite) or moved into a fresh database with `manage.py export` /
`import` (PostgreSQL, chain verified); `manage.py serve --workers 2 --no-worker` serves it;
`manage.py sleep` runs a full sleep; 16 client threads write notes through POST /api/v1/nodes.
Reported: writes/s, p50 and p99 latency, errors; asserted: 0 errors and 0 acknowledged writes
lost. Then recall p50 over the API on the same database, idle.

Usage (the bench process itself stays on SQLite; it starts the PostgreSQL processes):
  .ci/postgres.sh bash -c 'GROVE_BENCH_PG_URL=$GROVE_DATABASE_URL GROVE_DATABASE_URL= \
      make bench BENCH_ARGS="--only load --sizes 100000"'

"""

from __future__ import annotations

import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

from django.conf import settings

from bench.api_bench import _free_port, _start_sleep, _wait_listening
from bench.synthetic import _vocabulary, bench_dir, graph_copy, sentence

WRITERS = 16
WRITES_PER_WRITER = 60
RECALLS = 60


def _run(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args}: {done.stderr[-2000:]}")
    return done.stdout.strip()


def _django(env: dict[str, str], code: str) -> str:
    return _run(env, "-c", f"import django; django.setup()\n{code}")


def _sqlite_env(db: Path) -> dict[str, str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "grove.settings", "GROVE_DB_PATH": str(db)}
    env.pop("GROVE_DATABASE_URL", None)
    return {**env, "GROVE_SCROLL_DIR": str(db.parent / "scroll-load")}


def _postgres_env(n_nodes: int, url: str) -> dict[str, str]:
    """A fresh database grove_load_N on the server of `url`, holding the synthetic graph."""
    source = graph_copy(n_nodes, "load-src")
    name = f"grove_load_{n_nodes}"
    parts = urllib.parse.urlsplit(url)
    env = {
        **_sqlite_env(source),
        "GROVE_DATABASE_URL": urllib.parse.urlunsplit(parts._replace(path=f"/{name}")),
    }
    admin = {**env, "GROVE_DATABASE_URL": url}
    _django(
        admin,
        "from django.db import connection\n"
        "with connection._nodb_cursor() as c:\n"
        f"    c.execute('DROP DATABASE IF EXISTS {name} WITH (FORCE)')\n"
        f"    c.execute('CREATE DATABASE {name}')",
    )
    dump = bench_dir() / f"load-{n_nodes}.jsonl"
    dump.unlink(missing_ok=True)
    _run(_sqlite_env(source), "manage.py", "export", str(dump))
    _run(env, "manage.py", "migrate", "-v0")
    _run(env, "manage.py", "import", str(dump))
    return env


def _writer(port: int, secret: str, origin: int, seed: int, out: dict[str, list]) -> None:
    rng = random.Random(seed)
    vocab = _vocabulary(random.Random(7))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    for i in range(WRITES_PER_WRITER):
        body = {
            "body": f"{sentence(rng, vocab, rng.randint(8, 20))} (writer {seed} write {i})",
            "kind": "note",
            "jurisdiction": "home",
            "signature": "bench",
            "origins": [{"id": origin, "relation": "derived_from"}],
        }
        started = time.perf_counter()
        try:
            conn.request("POST", "/api/v1/nodes", body=json.dumps(body), headers=headers)
            response = conn.getresponse()
            payload = response.read().decode()
        except (OSError, http.client.HTTPException) as exc:
            out["errors"].append(f"transport: {exc}")
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            continue
        out["latency"].append(time.perf_counter() - started)
        if response.status in (200, 201):
            out["acked"].append(json.loads(payload)["id"])
        else:
            out["errors"].append(f"{response.status}: {payload[:200]}")
    conn.close()


def _recall_p50(port: int, secret: str) -> float:
    rng = random.Random(5)
    vocab = _vocabulary(random.Random(7))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Authorization": f"Bearer {secret}"}
    took = []
    for _ in range(RECALLS):
        query = urllib.parse.urlencode({"q": sentence(rng, vocab, 4), "limit": 10})
        started = time.perf_counter()
        conn.request("GET", f"/api/v1/recall?{query}", headers=headers)
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
        took.append(time.perf_counter() - started)
    return statistics.median(took) * 1000


def _load(engine: str, env: dict[str, str]) -> str:
    secret, origin = _token_and_origin(env)
    port = _free_port()
    server = _start_serve(port, env)
    try:
        _wait_listening(port, server)
        sleeper = _start_sleep(env)
        out, took = _write_all(port, secret, origin)
        sleep_running_at_end = sleeper.poll() is None
        _, sleep_err = sleeper.communicate(timeout=3600)
        recall_ms = _recall_p50(port, secret)
    finally:
        os.killpg(server.pid, 2)
        server.communicate(timeout=60)
    acked = out["acked"]
    present = int(
        _django(
            env,
            f"from memory.models import Node\nprint(Node.objects.filter(pk__in={acked!r}).count())",
        )
    )
    lost = len(set(acked)) - present
    assert not out["errors"], out["errors"][:3]
    assert lost == 0, f"{lost} acknowledged writes are missing"
    assert sleeper.returncode == 0, sleep_err[-500:]
    latency = sorted(out["latency"])
    p99 = latency[min(len(latency) - 1, int(len(latency) * 0.99))]
    return (
        f"| {engine} | {len(acked)}/{WRITERS * WRITES_PER_WRITER} | "
        f"{'yes' if sleep_running_at_end else 'no (finished first)'} | "
        f"**{len(acked) / took:.0f}** | {statistics.median(latency) * 1000:.0f} ms | "
        f"{p99 * 1000:.0f} ms | {len(out['errors'])} | {lost} | {recall_ms:.0f} ms |"
    )


def _token_and_origin(env: dict[str, str]) -> tuple[str, int]:
    """A fresh agent token's secret and the first personal node (the writes' origin)."""
    token = (
        "from memory.tokens import create_token\n"
        "print(create_token(name='load', domains=['personal'])[1])"
    )
    secret = _django(env, token).splitlines()[-1]
    origin = int(
        _django(
            env,
            "from memory.models import Node\n"
            "print(Node.objects.filter(domain='personal').order_by('id').values_list('id', "
            "flat=True).first())",
        )
    )
    return secret, origin


def _start_serve(port: int, env: dict[str, str]) -> subprocess.Popen:
    # Its own session: the whole serve (both web processes) is stopped with one killpg.
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "serve",
            "--workers",
            "2",
            "--no-worker",
            "--port",
            str(port),
        ],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _write_all(port: int, secret: str, origin: int) -> tuple[dict[str, list], float]:
    """WRITERS threads writing at once: their acked ids, errors and latencies, and the seconds."""
    out: dict[str, list] = {"acked": [], "errors": [], "latency": []}
    threads = [
        threading.Thread(target=_writer, args=(port, secret, origin, w, out))
        for w in range(WRITERS)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return out, time.perf_counter() - started


def run(sizes: list[int]) -> str:
    pg_url = os.environ.get("GROVE_BENCH_PG_URL", "")
    lines = [
        "## Load on both engines (bench/load_bench.py)",
        "",
        f"{WRITERS} API writers x {WRITES_PER_WRITER} notes over 2 web processes (`serve "
        "--workers 2`, 8 threads each) while `manage.py sleep` runs a full sleep; 0 errors and 0 "
        "acknowledged writes lost are asserted. Recall p50: GET /api/v1/recall afterwards.",
        "",
    ]
    for n in sizes:
        lines += [
            f"### {n:,} nodes",
            "",
            "| engine | acked | sleep still running at the end | writes/s | p50 | p99 | errors "
            "| lost | recall p50 |",
            "|---|---|---|---|---|---|---|---|---|",
            _load("SQLite", _sqlite_env(graph_copy(n, "load"))),
        ]
        if pg_url:
            lines.append(_load("PostgreSQL 15", _postgres_env(n, pg_url)))
        else:
            lines.append("| PostgreSQL | not run: set GROVE_BENCH_PG_URL |")
        lines.append("")
    return "\n".join(lines)
