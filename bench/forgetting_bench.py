"""The forgetting simulator: a year of use, day by day under time-machine, through the real write
path (commit_turn, write_node), real recall and read, and the real run_sleep nightly, for each
policy on its own fresh database. Reported per month: arrived, live, decayed, permanent, regret
(needs whose node had decayed and was not found) and net recall@10 (needs whose node was found
in the top 10, live or, with a dig, dug up), and the queries the agent spent.
report() writes the Markdown section, the default threshold by RULE and the chart
(docs/bench/forgetting.svg).

A policy "reach N d + dig" is "reach N d" with the agent's dig (memory/recall/dig.py): when live
recall's top 10 miss the needed node and recall names forgotten matches (or answers nothing),
the agent digs with the same words and, if the node is among the dug-up 10, reads it through the
agents' door (operations.read_node), which brings it back with what it holds.

Usage: python -m bench --only forgetting [--days 365] [--scale 0.1] [--policies "keep
everything,reach 90 d,reach 90 d + dig"]. `scale` multiplies every daily count below
(stochastic rounding): the default 0.1 keeps a year to minutes; scale 1 (the full workload)
costs about 4 s of CPU a day in month 1 and grows with the store, mostly in the nightly
integrity checks. With keep everything among the policies, each "reach N d" (with a dig or
without) starts from its day-N snapshot (see _snapshot).
"""

from __future__ import annotations

import bisect
import contextlib
import json
import pickle
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

# Its tables are led by month numbers, not sizes: bench/__main__.py carries no old rows in.
SIZED = False

# --- the workload: one person's day of use (per day, before `scale`) ----------------------------
TURNS = 20  # one conversation of 20 turns (commit_turn)
CLIPPINGS = 30  # wild internet pages on the same topics
INFERENCES = 5  # agent inferences derived from that day's pairs
VAULT_NOTES = 2  # vault notes, new or edited
NEEDS = 20  # a recall with words from the needed node's body, then a read if in the top 10
NEED_RECENT, NEED_READ_BEFORE = 0.70, 0.20  # the rest (10%) older material never read
RECENT_DAYS = 14
TOP_K = 10
QUERY_WORDS = 3  # words drawn from the needed node's body, so competitors matter as it grows
DAYS, SCALE = 365, 0.1
POLICIES = ["keep everything", "one-hop gate", "reach 14 d", "reach 30 d", "reach 90 d"]
START = datetime(2025, 1, 1, 9, tzinfo=UTC)
ANCHORS = ".anchors.jsonl"  # suffix of a database's own chain-anchor file (GROVE_CHAIN_ANCHOR)
NEVER = 36500  # an age threshold (100 years) no node reaches: the sweep collects nothing


@dataclass
class Month:
    arrived: int = 0
    needs: int = 0
    regret: int = 0
    hits: int = 0
    live: int = 0
    decayed: int = 0
    permanent: int = 0
    protected_decayed: int = 0
    integrity: int = 0  # violations of all of sleep's integrity checks at the month's end
    queries: int = 0  # recalls and digs the agent spent
    dug: int = 0  # needs found by a dig (their node had decayed), read and so brought back
    seconds: dict[str, float] = field(default_factory=dict)  # arrive / needs / sleep, wall clock


@dataclass
class State:
    arrivals: list[tuple[int, int, str]] = field(default_factory=list)  # (day, id, body)
    read: set[int] = field(default_factory=set)
    read_at: list[int] = field(default_factory=list)  # positions in arrivals of the read nodes
    index: dict[int, int] = field(default_factory=dict)  # node id -> position in arrivals
    total: int = 0  # nodes at the last month's end
    nightly_integrity: bool = True
    dig: bool = False  # the agent digs when live recall misses and names forgotten matches
    months: list[Month] = field(default_factory=list)


def _count(rng: random.Random, n: float) -> int:
    return int(n) + (1 if rng.random() < n - int(n) else 0)


def _body(rng: random.Random, topic: list[str], vocab: list[str], tag: str) -> str:
    from bench.synthetic import sentence

    words = rng.sample(topic, 3) + rng.sample(vocab, 3)  # topic words plus rarer ones
    return f"{sentence(rng, vocab, rng.randint(6, 12))} {' '.join(words)} ({tag})"


def _arrived(st: State, day: int, node_id: int, body: str) -> None:
    st.index[node_id] = len(st.arrivals)
    st.arrivals.append((day, node_id, body))


def _arrive(day: int, rng: random.Random, vocab: list[str], scale: float, st: State) -> None:
    """One day's arrivals through the real write path."""
    from memory.scroll import commit_turn
    from memory.write import write_node

    topic = rng.sample(vocab[200:2000], 12)
    pairs = []
    for t in range(_count(rng, TURNS * scale)):
        pair = commit_turn(
            conversation=f"day-{day}",
            user=_body(rng, topic, vocab, f"d{day} q{t}"),
            assistant=_body(rng, topic, vocab, f"d{day} a{t}"),
            holder="agent:bench",
        ).node
        pairs.append(pair.pk)
        _arrived(st, day, pair.pk, pair.body)
    made = []
    for c in range(_count(rng, CLIPPINGS * scale)):
        made.append(
            {
                "kind": "internet",
                "jurisdiction": "wild",
                "source": f"https://news.example/{day}/{c}",
            }
        )
    for i in range(_count(rng, INFERENCES * scale) if pairs else 0):
        origins = [{"id": p} for p in rng.sample(pairs, min(2, len(pairs)))]
        made.append({"kind": "inference", "jurisdiction": "home", "origins": origins, "n": i})
    for v in range(_count(rng, VAULT_NOTES * scale)):
        name = rng.randrange(max(1, day // 3 + 1))  # about a third are edits of an older file
        src = write_node(
            body=f"vault/file-{name}.md version of day {day} #{v}",
            kind="import",
            jurisdiction="wild",
            signature="vault",
            source=f"vault/file-{name}.md",
        ).node
        made.append({"kind": "note", "jurisdiction": "home", "origins": [{"id": src.pk}]})
    for n, fields in enumerate(made):
        fields.pop("n", None)
        body = _body(rng, topic, vocab, f"d{day} {fields['kind']} {n}")
        node = write_node(body=body, signature="agent:bench", **fields).node
        _arrived(st, day, node.pk, node.body)


def _never_read(rng: random.Random, st: State, cut: int) -> list[tuple[int, int, str]]:
    """One uniform draw among the first `cut` arrivals never read (empty if there are none)."""
    for _ in range(64):
        pick = st.arrivals[rng.randrange(cut)]
        if pick[1] not in st.read:
            return [pick]
    return [a for a in st.arrivals[:cut] if a[1] not in st.read]


def _need(day: int, rng: random.Random, st: State, month: Month) -> None:
    """One need: pick a node by the need mix, recall with words of its body (through the agents'
    door, as the agent would), dig when st.dig and recall missed, and read it if found."""
    from agents.operations import dig_packets, read_node
    from memory.models import Node
    from memory.recall import recall
    from memory.recall.dig import forgotten_matches
    from memory.tokens import actor_of

    # arrivals are in day order: the recent ones are a suffix, found by bisection, and the
    # never-read older ones are drawn by rejection, so a need costs O(reads), not O(arrivals)
    cut = bisect.bisect_right(st.arrivals, day - RECENT_DAYS, key=lambda a: a[0])
    roll, pool = rng.random(), None
    if roll >= NEED_RECENT and cut:
        if roll < NEED_RECENT + NEED_READ_BEFORE:
            pool = [st.arrivals[i] for i in st.read_at if i < cut]
        else:
            pool = _never_read(rng, st, cut)
        pool = pool or st.arrivals[:cut]
    pool = pool or st.arrivals[cut:]
    if not pool:
        return
    _, node_id, body = rng.choice(pool)
    words = [w.strip(".()") for w in body.split() if len(w) > 3]
    query = " ".join(rng.sample(words, min(QUERY_WORDS, len(words))))
    month.needs += 1
    if not st.dig and Node.objects.filter(pk=node_id, decayed_at__isnull=False).exists():
        month.regret += 1  # recall cannot find it; without a dig, nothing else will
        return
    # recall_packets' recall (the token's domains, its actor), with its forgotten_matches asked
    # only when the dig decision reads it: at the same instant, so the same count, but most
    # needs are found live and the count is a second scoring of the words (about half of a
    # recall's cost).
    agent = _agent()
    domains = list(agent.domains)
    answer = recall(query, scope="both", domains=domains, limit=TOP_K, actor=actor_of(agent))
    month.queries += 1
    found = [p["id"] for p in answer]
    if (
        node_id not in found
        and st.dig
        and (not found or forgotten_matches(query, scope="both", domains=domains))
    ):
        month.queries += 1
        found = [p["id"] for p in dig_packets(agent, q=query, scope="both", limit=TOP_K)["results"]]
        if node_id in found:
            month.dug += 1
    if node_id not in found:
        if Node.objects.filter(pk=node_id, decayed_at__isnull=False).exists():
            month.regret += 1
        return
    month.hits += 1
    read_node(agent, node_id)
    if node_id not in st.read:
        st.read.add(node_id)
        st.read_at.append(st.index[node_id])


def _agent() -> Any:
    """The simulated agent's token (every domain the workload writes to), made on first use."""
    from memory.models import ApiToken
    from memory.tokens import create_token

    token = ApiToken.objects.filter(name="bench").first()
    return token or create_token(name="bench", domains=["personal"])[0]


def _old_gate() -> None:
    """The one-hop gate and the cascade that reachability replaced (14 and 30 days), kept here
    only to compare: decay a live, unread, unprotected node with no live neighbour at all, then
    a derived child whose origins all decayed and that no live node derives from."""
    from django.db import connection, transaction
    from django.utils import timezone

    from memory import audit
    from memory.reach import candidates
    from memory.visibility import db_time

    gate = """NOT EXISTS (SELECT 1 FROM memory_edge e JOIN memory_node m ON m.id = e.to_node_id
                WHERE e.from_node_id = n.id AND m.decayed_at IS NULL)
        AND NOT EXISTS (SELECT 1 FROM memory_edge e JOIN memory_node m ON m.id = e.from_node_id
                WHERE e.to_node_id = n.id AND m.decayed_at IS NULL)"""
    cascade = """n.id IN (SELECT e.from_node_id FROM memory_edge e JOIN memory_node p
                ON p.id = e.to_node_id WHERE e.kind = 'derived_from' AND p.decayed_at IS NOT NULL)
        AND NOT EXISTS (SELECT 1 FROM memory_edge e JOIN memory_node m ON m.id = e.to_node_id
                WHERE e.from_node_id = n.id AND e.kind = 'derived_from' AND m.decayed_at IS NULL)
        AND NOT EXISTS (SELECT 1 FROM memory_edge e JOIN memory_node m ON m.id = e.from_node_id
                WHERE e.to_node_id = n.id AND e.kind = 'derived_from' AND m.decayed_at IS NULL)"""
    now = timezone.now()
    for where, days, reason in ((gate, 14, "age_no_access"), (cascade, 30, "cascade")):
        allowed = set(candidates(now - timedelta(days=days)).tolist())
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SELECT n.id FROM memory_node n WHERE n.decayed_at IS NULL AND {where}")
            ids = sorted(i for (i,) in cursor.fetchall() if i in allowed)
            marks = ",".join(["%s"] * len(ids)) or "NULL"
            cursor.execute(
                f"UPDATE memory_node SET decayed_at = %s WHERE id IN ({marks})",
                [db_time(now), *ids],
            )
            audit.record_many("decayed", ids, actor="sleep", reason=reason, at=now)


def _month_end(month: Month, st: State) -> None:
    from django.db.models import Count, Q

    from memory.custody.integrity import live_node_holds_decayed_node, root_decayed, run_checks
    from memory.models import Node

    counts = Node.objects.aggregate(
        live=Count("id", filter=Q(decayed_at__isnull=True)),
        decayed=Count("id", filter=Q(decayed_at__isnull=False)),
        permanent=Count("id", filter=Q(permanent=True)),
    )
    month.live, month.decayed, month.permanent = (
        counts["live"],
        counts["decayed"],
        counts["permanent"],
    )
    month.arrived = month.live + month.decayed - st.total
    st.total = month.live + month.decayed
    read_gone = Node.objects.filter(pk__in=st.read, decayed_at__isnull=False).count()
    month.protected_decayed = read_gone + len(root_decayed()) + len(live_node_holds_decayed_node())
    month.integrity = sum(len(r.violations) for r in run_checks(full_chain=True))


def _day(
    day: int, policy: str, rng: random.Random, vocab: list[str], scale: float, st: State, m: Month
) -> None:
    """One day: arrivals, then needs, in the morning; the nightly sleep in the evening (without
    its read-only integrity step when st.nightly_integrity is off: _month_end runs them all)."""
    import time_machine

    from memory.sleep import run as sleep_run
    from memory.sleep.run import run_sleep

    clock = time.perf_counter()
    with time_machine.travel(START + timedelta(days=day), tick=True):
        _arrive(day, rng, vocab, scale, st)
        clock = _lap(m, "arrive", clock)
        for _ in range(_count(rng, NEEDS * scale)):
            _need(day, rng, st, m)
        clock = _lap(m, "needs", clock)
    steps = sleep_run.STEPS if st.nightly_integrity else sleep_run.STEPS[:-1]
    assert sleep_run.STEPS[-1] == "integrity"
    with (
        time_machine.travel(START + timedelta(days=day, hours=18), tick=True),
        mock.patch.object(sleep_run, "STEPS", steps),
    ):
        run_sleep(requested_by="bench")
        if policy == "one-hop gate":
            _old_gate()
        _lap(m, "sleep", clock)


def _lap(m: Month, phase: str, since: float) -> float:
    now = time.perf_counter()
    m.seconds[phase] = m.seconds.get(phase, 0.0) + now - since
    return now


def _progress(m: Month) -> str:
    laps = " ".join(f"{k} {v:.0f}s" for k, v in m.seconds.items())
    return f"live {m.live} decayed {m.decayed} hits {m.hits}/{m.needs} regret {m.regret} ({laps})"


def simulate(
    policy: str,
    *,
    days: int,
    scale: float,
    path: Path | None,
    snapshots: dict[int, Path] | None = None,
    resume: Path | None = None,
    nightly_integrity: bool = True,
    on_snapshot: Callable[[int], None] | None = None,
) -> list[Month]:
    """One policy for `days` days on a fresh database at `path` (None: the current one, as a
    test's); returns its months. "reach N d" sweeps at an age threshold of N days.
    `snapshots` {day: file}: save the database and the simulator's state at the start of that
    day; `resume`: start from such a snapshot instead of day 0 (see _snapshot).
    `nightly_integrity` off: sleep skips its read-only integrity step, which is most of a night's
    cost as the store grows; all the checks then run at each month's end instead.
    `on_snapshot(day)` is called once that day's snapshot is saved (run() starts the forks)."""
    from django.conf import settings
    from django.core.management import call_command

    from bench.synthetic import _vocabulary, use_database

    age = _age(policy) or NEVER
    old_age, settings.GROVE_DECAY_MIN_AGE_DAYS = settings.GROVE_DECAY_MIN_AGE_DAYS, age
    # The simulated owner releases whatever the mass-forgetting guard holds back: the year
    # measures forgetting itself, and the guard's price is the owner's review, not recall.
    old_guard, settings.GROVE_DECAY_GUARD_SHARE = settings.GROVE_DECAY_GUARD_SHARE, 1.0
    old_anchor = settings.GROVE_CHAIN_ANCHOR
    rng, vocab, st, month, first = (
        random.Random(11),
        _vocabulary(random.Random(7)),
        State(),
        Month(),
        0,
    )
    try:
        with contextlib.ExitStack() as stack:
            if path is not None:
                for suffix in ("", "-wal", "-shm", ANCHORS):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
                # One chain-anchor file per database: shared, each one's anchors contradict the
                # others' and integrity's chain_anchors check fails for nothing.
                settings.GROVE_CHAIN_ANCHOR = Path(f"{path}{ANCHORS}")
                if resume is not None:
                    shutil.copyfile(resume, path)
                    if Path(f"{resume}{ANCHORS}").exists():
                        shutil.copyfile(f"{resume}{ANCHORS}", f"{path}{ANCHORS}")
                    with resume.with_suffix(".pickle").open("rb") as handle:
                        first, rng_state, st, month = pickle.load(handle)
                    rng.setstate(rng_state)
                stack.enter_context(use_database(path))
                call_command("migrate", verbosity=0)
            st.nightly_integrity = nightly_integrity
            st.dig = policy.endswith("+ dig")
            for day in range(first, days):
                if snapshots and day in snapshots:
                    _snapshot(snapshots[day], (day, rng.getstate(), st, month))
                    if on_snapshot is not None:
                        on_snapshot(day)
                _day(day, policy, rng, vocab, scale, st, month)
                if (day + 1) % 30 == 0 or day == days - 1:
                    clock = time.perf_counter()
                    _month_end(month, st)
                    _lap(month, "checks", clock)
                    st.months.append(month)
                    print(f"    {policy} month {len(st.months)}: {_progress(month)}", flush=True)
                    month = Month()
    finally:
        settings.GROVE_DECAY_MIN_AGE_DAYS = old_age
        settings.GROVE_DECAY_GUARD_SHARE = old_guard
        settings.GROVE_CHAIN_ANCHOR = old_anchor
    return st.months


def _snapshot(target: Path, state: tuple) -> None:
    """The database file (WAL folded in) and the simulator's state, so that "reach N d" can
    start at day N from keep-everything's run: until then no node is N days old, every node is
    a root, nothing decays and the two runs are the same (tests/bench/test_forgetting_bench.py
    checks a resumed run against one from day 0). It saves N of the 365 days per threshold."""
    from django.conf import settings
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copyfile(connection.settings_dict["NAME"], target)
    if Path(settings.GROVE_CHAIN_ANCHOR).exists():
        shutil.copyfile(settings.GROVE_CHAIN_ANCHOR, f"{target}{ANCHORS}")
    with target.with_suffix(".pickle").open("wb") as handle:
        pickle.dump(state, handle)


def _age(policy: str) -> int | None:
    return int(policy.split()[1]) if policy.startswith("reach") else None


def run(sizes: list[int]) -> str:
    """All policies side by side; `sizes` is ignored (the workload sets the size). With keep
    everything among them, each "reach N d" starts from its snapshot at day N (see _snapshot),
    in a process of its own while keep everything goes on (see arms)."""
    import os

    from bench.synthetic import bench_dir

    days = int(os.environ.get("GROVE_BENCH_DAYS", DAYS))
    scale = float(os.environ.get("GROVE_BENCH_SCALE", SCALE))
    nightly = os.environ.get("GROVE_BENCH_INTEGRITY", "nightly") == "nightly"
    chosen = os.environ.get("GROVE_BENCH_POLICIES", "").split(",")
    policies = [p.strip() for p in chosen if p.strip()] or POLICIES
    results, took = arms(policies, days=days, scale=scale, nightly=nightly, out=bench_dir())
    return report(results, took, days=days, scale=scale, nightly=nightly)


def arms(
    policies: list[str], *, days: int, scale: float, nightly: bool, out: Path
) -> tuple[dict[str, list[Month]], dict[str, float]]:
    """Each policy's months and seconds, in `policies`' order, each on its own database in `out`.
    With keep everything among them it runs first, saving a snapshot at each fork day; each
    "reach N d" (with a dig or without) starts from its day-N snapshot as soon as it is saved,
    in a process of its own, beside keep everything's remaining days: the runs share nothing
    after the fork (their own database, anchor file and state), so running them at once changes
    no number, only the wall time (tests/bench/test_forgetting_bench.py checks it)."""
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing import get_context

    keep = "keep everything" in policies
    forks = {
        a: out / f"forgetting-day-{a}.sqlite3" for p in policies if (a := _age(p)) and a < days
    }
    forked = [p for p in policies if keep and (_age(p) or 0) in forks]
    results: dict[str, list[Month]] = {}
    took: dict[str, float] = {}
    pending: dict[str, Future[tuple[list[Month], float]]] = {}
    # spawn, not fork: a forked child would share the parent's open SQLite connection.
    with ProcessPoolExecutor(
        max_workers=max(1, len(forked)), mp_context=get_context("spawn"), initializer=_child
    ) as pool:

        def start(day: int) -> None:
            for policy in forked:
                if _age(policy) == day:
                    pending[policy] = pool.submit(
                        _arm, policy, days, scale, out, resume=forks[day], nightly=nightly
                    )

        for policy in ["keep everything"] if keep else []:
            results[policy], took[policy] = _arm(
                policy, days, scale, out, nightly=nightly, snapshots=forks, on_snapshot=start
            )
        for policy in policies:
            if policy in pending:
                results[policy], took[policy] = pending[policy].result()
            elif policy not in results:
                results[policy], took[policy] = _arm(policy, days, scale, out, nightly=nightly)
    for policy, seconds in took.items():
        print(f"  {policy}: {seconds:.0f}s", flush=True)
    return {p: results[p] for p in policies}, {p: took[p] for p in policies}


def _child() -> None:
    import django

    django.setup()


def _arm(
    policy: str, days: int, scale: float, out: Path, **options: Any
) -> tuple[list[Month], float]:
    """One policy's run on its own database in `out` (its months also saved as JSON beside it)
    and its wall seconds."""
    started = time.perf_counter()
    path = out / f"forgetting-{policy.replace(' ', '-')}.sqlite3"
    nightly = options.pop("nightly", True)
    months = simulate(
        policy, days=days, scale=scale, path=path, nightly_integrity=nightly, **options
    )
    path.with_suffix(".json").write_text(json.dumps([m.__dict__ for m in months], indent=1))
    return months, time.perf_counter() - started


# --- the report: the Markdown section, the default threshold by RULE, the chart ------------

MAX_LIVE = 0.60  # a threshold qualifies with at most this share of arrivals live at month 12
RULE = (
    "the default is the reachability threshold with the highest net recall@10 over months "
    f"1-12 among those with at most {MAX_LIVE:.0%} of arrivals live at the end of month 12; "
    "a tie (equal to three decimals) goes to the longer threshold, i.e. to remembering."
)
SVG = Path(__file__).resolve().parent.parent / "docs" / "bench" / "forgetting.svg"


def _chart(results: dict[str, list[Month]], arrived: list[int]) -> str:
    """Two panels, one line per policy: live share of arrivals, and net recall@10, by month."""
    colours = ["#777", "#d08c00", "#1f77b4", "#2ca02c", "#9467bd"]
    w, h, pad = 360, 220, 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w + 20}" height="{h + 70}" '
             'font-family="sans-serif" font-size="11">']  # fmt: skip
    for panel, (title, value) in enumerate(
        (
            ("live / arrived", lambda m, total: m.live / max(1, total)),
            ("net recall@10", lambda m, total: m.hits / max(1, m.needs)),
        )
    ):
        x0 = panel * (w + 20)
        parts.append(f'<text x="{x0 + pad}" y="14">{title} by month (0..1)</text>')
        parts.append(
            f'<rect x="{x0 + pad}" y="20" width="{w - pad}" height="{h - 40}" '
            'fill="none" stroke="#ccc"/>'
        )
        for name, colour in zip(results, colours, strict=False):
            months = results[name]
            pts = []
            for i, m in enumerate(months):
                x = x0 + pad + (w - pad) * (i + 0.5) / max(1, len(months))
                y = 20 + (h - 40) * (1 - value(m, arrived[i]))
                pts.append(f"{x:.1f},{y:.1f}")
            parts.append(
                f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                f'points="{" ".join(pts)}"/>'
            )
    for i, (name, colour) in enumerate(zip(results, colours, strict=False)):
        parts.append(
            f'<text x="{pad + i * 140}" y="{h + 20}" fill="{colour}">&#9632; {name}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def side_by_side(results: dict[str, list[Month]], arrived: list[int]) -> list[str]:
    """One row per month, each policy's live share, regret, net recall@10 and queries spent
    (recalls plus digs; a dig policy's dug column: needs a dig found and brought back)."""
    names = list(results)
    head = " | ".join(f"{n}: live, regret, recall@10, queries" for n in names)
    lines = [
        "Side by side, per month (live as a share of all arrivals so far; queries: recalls "
        "plus digs; with a dig, the needs it found are in brackets):",
        "",
        f"| month | {head} |",
        "|---:|" + "---|" * len(names),
    ]
    for i in range(max(len(m) for m in results.values())):
        cells = []
        for n in names:
            if i >= len(results[n]):
                cells.append("")
                continue
            m = results[n][i]
            dug = f" ({m.dug} dug)" if n.endswith("+ dig") else ""
            cells.append(
                f"{m.live / max(1, arrived[i]):.0%}, {m.regret}/{m.needs}, "
                f"{m.hits / max(1, m.needs):.2f}{dug}, {m.queries}"
            )
        lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
    return lines


def summary(results: dict[str, list[Month]]) -> list[str]:
    """Months 1-12 per policy (live share at month 12, regret, net recall@10, and net recall@10
    of months 10-12 alone), the default threshold by RULE, and whether it pays for itself."""
    rows, live_share, recall = [], {}, {}
    for policy, months in results.items():
        year, last = months[:12], months[9:12]
        total = sum(m.arrived for m in year)
        needs = sum(m.needs for m in year)
        regret, hits = sum(m.regret for m in year), sum(m.hits for m in year)
        live_share[policy] = year[-1].live / max(1, total)
        recall[policy] = round(hits / max(1, needs), 3)
        late = sum(m.hits for m in last) / max(1, sum(m.needs for m in last))
        rows.append(
            f"| {policy} | {live_share[policy]:.0%} | {regret}/{needs} "
            f"({regret / max(1, needs):.1%}) | {recall[policy]:.3f} | {late:.3f} | "
            f"{hits / max(1, needs - regret):.3f} |"
        )
    fit = [
        p
        for p in results
        if _age(p) is not None and live_share[p] <= MAX_LIVE and len(results[p]) >= 12
    ]
    pick = max(fit, key=lambda p: (recall[p], _age(p))) if fit else None
    keep = recall.get("keep everything")
    if pick is None:
        verdict = f"No threshold keeps live at or under {MAX_LIVE:.0%} after 12 months."
    elif keep is None:
        verdict = f"**Default threshold: {pick}.**"
    else:
        pays = "pays" if recall[pick] >= keep else "does not pay"
        verdict = (
            f"**Default threshold: {pick}.** At it forgetting {pays} for itself: net recall@10 "
            f"{recall[pick]:.3f} against keep-everything's {keep:.3f}, with "
            f"{live_share[pick]:.0%} of arrivals live after 12 months."
        )
    return [
        "| policy | live after 12 months | regret, months 1-12 | net recall@10, months 1-12 | "
        "net recall@10, months 10-12 | recall@10 of needs still live, months 1-12 |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"The rule, fixed before the run: {RULE}",
        "",
        verdict,
    ]


def report(
    results: dict[str, list[Month]],
    took: dict[str, float],
    *,
    days: int,
    scale: float,
    nightly: bool = True,
    svg: Path = SVG,
) -> str:
    """The Markdown section and the chart (`svg`) for `results`."""
    checks = "" if nightly else " (its read-only integrity checks at month ends instead)"
    arrived, total = [], 0
    for m in next(iter(results.values())):
        total += m.arrived
        arrived.append(total)
    svg.write_text(_chart(results, arrived))
    lines = [
        "## Forgetting",
        "",
        f"`bench/forgetting_bench.py`: {days} days at scale {scale} (per day "
        f"{TURNS * scale:g} turns, {CLIPPINGS * scale:g} clippings, {INFERENCES * scale:g} "
        f"inferences, {VAULT_NOTES * scale:g} vault notes, {NEEDS * scale:g} needs: "
        f"{NEED_RECENT:.0%} from the last {RECENT_DAYS} days, {NEED_READ_BEFORE:.0%} older and "
        "read before, the rest older and never read), real write path, recall, read and a "
        f"nightly run_sleep{checks}, "
        "one fresh database per policy. Per 30-day month: arrived (nodes "
        "written this month, the vault's file imports included), live / decayed / permanent "
        "(at its end; live also as a share of all arrivals so far), regret (needs whose node "
        "had decayed), net recall@10 (needs whose node was live and in the top 10), protected "
        "decayed (read nodes decayed, plus the integrity checks root_decayed and "
        "live_node_holds_decayed_node; must be 0), integrity (violations of all of sleep's "
        "integrity checks, full hash chain included, at the month's end; must be 0).",
        "",
        f"![live share and net recall@10 by month](bench/{svg.name})",
        "",
        "| policy | month | arrived | live | decayed | permanent | regret | net recall@10 | "
        "protected decayed | integrity |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for policy, months in results.items():
        for i, m in enumerate(months):
            lines.append(
                f"| {policy} | {i + 1} | {m.arrived} | {m.live} ({m.live / max(1, arrived[i]):.0%})"
                f" | {m.decayed} | {m.permanent} | {m.regret}/{m.needs} | "
                f"{m.hits / max(1, m.needs):.2f} | {m.protected_decayed} | {m.integrity} |"
            )
    lines += ["", *side_by_side(results, arrived), "", *summary(results), ""]
    lines.append("Seconds per policy: " + ", ".join(f"{p} {t:.0f}" for p, t in took.items()) + ".")
    return "\n".join(lines)


def live_breakdown(path: Path, *, age: int, at: datetime) -> dict[str, int]:
    """Why each live node of a finished run's database (at `path`) is live at `at` (store
    clock), under the age threshold `age` days: young; permanent; read at least once (a root
    for good), those revived by a dig apart; or unread and old, so held by a root, those
    restored with a dug node apart. Also how many of the dug-and-read were read again after
    their revival, and how many revived before the last `age` days were not (a revival that
    stayed a root untouched a whole threshold)."""
    from django.db.models import Q

    from bench.synthetic import use_database
    from memory.models import Event, EventKind, Node

    cutoff = at - timedelta(days=age)
    with use_database(path):
        live = Node.objects.filter(decayed_at__isnull=True)
        old = live.filter(created_at__lte=cutoff)
        dug = dict(
            Event.objects.filter(kind=EventKind.REVIVED, reason="dug_and_read")
            .order_by("id")
            .values_list("node_id", "at")
        )
        brought = set(
            Event.objects.filter(kind=EventKind.RESTORED, reason="held_by_dug").values_list(
                "node_id", flat=True
            )
        )
        read = old.filter(permanent=False, access_count__gt=0)
        held = old.filter(permanent=False, access_count=0)
        stale = [i for i, when in dug.items() if when <= cutoff]
        return {
            "arrived": Node.objects.count(),
            "live": live.count(),
            "young": live.filter(created_at__gt=cutoff).count(),
            "permanent": old.filter(permanent=True).count(),
            "read": read.count(),
            "read, dug and read": read.filter(pk__in=list(dug)).count(),
            "held": held.count(),
            "held, brought back with a dug node": held.filter(pk__in=brought).count(),
            "dug and read": len(dug),
            "dug, read again after": Node.objects.filter(pk__in=list(dug))
            .filter(Q(read_days__gt=1) | Q(access_count__gt=1))
            .count(),
            "dug over a threshold ago, still live": live.filter(pk__in=stale).count(),
        }
