"""Dashboard page benchmarks: server time per page on synthetic graphs (bench.synthetic).

Each size gets a fresh copy of the cached graph, embedded in full, with 5% of its nodes decayed
through the audit writer (so the audit log, the chart and the decayed-neighbour toggle have
something to show) and a few proposals. Pages are fetched with Django's test Client logged in as
the owner (force_login), so the time is the whole server side: middleware, view, queries,
template. Target: p95 <= 100 ms for every page.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from datetime import timedelta

from django.db import transaction
from django.test import Client
from django.utils import timezone

from bench.synthetic import _vocabulary, graph_copy, use_database

TARGET_P95_MS = 100.0
REPEATS = 30


def _prepare(n: int, rng: random.Random) -> dict[str, list[int]]:
    from memory import audit
    from memory.models import Node
    from memory.questions import plant_question
    from memory.vectors.embed import embed_missing
    from review.ceremony import preview_supersede, propose, root, supersede

    embed_missing(batch=2000)
    ids = list(Node.objects.values_list("id", flat=True))
    decayed = rng.sample(ids, n // 20)
    with transaction.atomic():
        Node.objects.filter(pk__in=decayed).update(decayed_at=timezone.now())
        audit.record_many("decayed", decayed, actor="sleep", reason="age_no_access")
    live = sorted(set(ids) - set(decayed))
    # A queue of hundreds from three agents (the desk's filters and pages have work to do);
    # five of them rooted, for the supersede and why-is-this-true pages.
    proposed = rng.sample(live, 300)
    for i, node_id in enumerate(proposed):
        propose(node_id, actor=f"agent:bench{i % 3}", reason="bench")
    ground = proposed[-5:]
    for node_id in ground:
        node = Node.objects.get(pk=node_id)
        root(node_id, adopting_words="bench", expected_body_hash=node.body_hash, owner="owner")
    # A chain of three versions for the version history (the old ground stays listed first).
    chain = [ground[0]]
    for step in ("first", "second"):
        old = Node.objects.get(pk=chain[-1])
        text = f"{old.body} ({step} correction)"
        new = supersede(
            old.pk,
            new_body=text,
            adopting_words="bench",
            expected_body_hash=preview_supersede(text)["body_hash"],
            owner="owner",
        )
        chain.append(new.pk)
    about = Node.objects.get(pk=proposed[0])
    question = plant_question(
        "What ties these together?", about=[about.pk], signature="owner", domain=about.domain
    )
    # Hubs (the synthetic import nodes) have ~200 children: the picture's worst case.
    hubs = list(
        Node.objects.filter(kind="import", decayed_at__isnull=True).values_list("id", flat=True)[
            :50
        ]
    )
    return {
        "live": live,
        "decayed": decayed,
        "hubs": hubs,
        "proposed": proposed,
        "ground": [*ground[1:], chain[-1]],
        "chain": chain,
        "question": [question.pk],
    }


AGENTS = 3
AGENT_DAYS = 7
AGENT_EVENTS_A_DAY = 400  # recalls and reads each, per agent and day


def _agent_activity(rng: random.Random, live: list[int]) -> None:
    """Three agents' last week: recalls and reads each day, through their tokens (the events the
    agents page and the audit log by actor and day read)."""
    from memory import audit
    from memory.tokens import create_token

    now = timezone.now()
    for a in range(AGENTS):
        token, _ = create_token(name=f"bench{a}", domains=["personal", "work"])
        with transaction.atomic():
            for day in range(AGENT_DAYS):
                for i in range(AGENT_EVENTS_A_DAY):
                    at = now - timedelta(days=day, seconds=i * 60)
                    actor = f"agent:bench{a}"
                    ids = rng.sample(live, 5)
                    detail = {"query": f"bench query {i}", "scope": "both", "ids": ids}
                    audit.record(
                        "recalled", node=None, actor=actor, detail=detail, at=at, token=token
                    )
                    audit.record("read", node=ids[0], actor=actor, at=at, token=token, snap={})


def _time(client: Client, paths: Callable[[int], str]) -> list[float]:
    samples = []
    for i in range(REPEATS + 3):
        path = paths(i)
        started = time.perf_counter()
        response = client.get(path)
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            raise AssertionError(f"{path} answered {response.status_code}")
        if hasattr(response, "streaming_content"):
            b"".join(response.streaming_content)
            elapsed = (time.perf_counter() - started) * 1000
        if i >= 3:  # the first fetches warm caches (vector matrix, templates)
            samples.append(elapsed)
    return samples


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _pages(
    rng: random.Random, words: list[str], ids: dict[str, list[int]]
) -> list[tuple[str, Callable[[int], str]]]:
    live, decayed, hubs = ids["live"], ids["decayed"], ids["hubs"]
    then = (timezone.now() - timedelta(days=30)).strftime("%Y-%m-%dT%H:%M")
    older = live[: len(live) // 2]  # ids ascend with the store clock: these existed by then

    def query(i: int) -> str:
        return words[i].replace(" ", "+")

    return [
        ("overview", lambda i: "/"),
        ("overview: pending-decays fragment", lambda i: "/overview/waiting/"),
        ("search", lambda i: f"/search/?q={query(i)}&scope=both"),
        ("search as of 30 days ago", lambda i: f"/search/?q={query(i)}&scope=both&as_of={then}"),
        ("node (read + picture)", lambda i: f"/node/{rng.choice(live)}/"),
        ("node, hub (~200 neighbours)", lambda i: f"/node/{hubs[i % len(hubs)]}/"),
        ("node, decayed neighbours shown", lambda i: f"/node/{rng.choice(live)}/?decayed=1"),
        ("node, decayed (owner view)", lambda i: f"/node/{rng.choice(decayed)}/"),
        ("node as of 30 days ago", lambda i: f"/node/{rng.choice(older)}/?as_of={then}"),
        ("audit log", lambda i: "/audit/"),
        ("audit log, page 40", lambda i: "/audit/?page=40"),
        ("audit log, kind+domain", lambda i: "/audit/?kind=decayed&domain=work"),
        ("sleep runs", lambda i: "/sleep/"),
        ("review queue", lambda i: "/review/"),
        ("review: decision panel", lambda i: f"/review/{ids['proposed'][i % 20]}/"),
        ("review: root screen", lambda i: f"/review/{ids['proposed'][i % 20]}/root/"),
        ("review: pending decays (now + 7 days)", lambda i: "/review/decays/"),
        (
            "review: pending decays, one group's nodes",
            lambda i: f"/review/decays/?origin={hubs[i % len(hubs)]}",
        ),
        ("review queue, one agent, page 2", lambda i: "/review/?agent=agent:bench1&page=2"),
        ("review: reject confirmation", lambda i: f"/review/{ids['proposed'][i % 20]}/reject/"),
        ("review: supersede screen", lambda i: f"/review/{ids['ground'][i % 5]}/supersede/"),
        ("review: why is this true", lambda i: f"/review/{ids['ground'][i % 5]}/why/"),
        ("review: let go confirmation", lambda i: f"/review/decays/{rng.choice(live)}/let-go/"),
        ("node, version 2 of 3 (both diffs)", lambda i: f"/node/{ids['chain'][1]}/"),
        ("review: version history", lambda i: f"/review/{ids['chain'][0]}/superseded/"),
        ("node picker, two words", lambda i: f"/search/pick/?for=feed-node&q={query(i)}"),
        ("questions", lambda i: "/review/questions/"),
        ("question", lambda i: f"/review/questions/{ids['question'][0]}/"),
        ("agent tokens", lambda i: "/tokens/"),
        ("browse", lambda i: "/nodes/"),
        ("browse, page 40", lambda i: "/nodes/?page=40"),
        ("browse, trust=proposed", lambda i: "/nodes/?trust=proposed"),
        ("browse, trust=unreviewed", lambda i: "/nodes/?trust=unreviewed"),
        ("browse, kind+domain", lambda i: "/nodes/?kind=note&domain=work"),
        ("browse, wild, oldest", lambda i: "/nodes/?jurisdiction=wild&sort=oldest"),
        ("browse, decayed", lambda i: "/nodes/?lifecycle=decayed"),
        ("browse, permanent", lambda i: "/nodes/?permanent=yes"),
        ("browse, most read", lambda i: "/nodes/?sort=most-read"),
        ("browse, pointing to a hub", lambda i: f"/nodes/?links_to={hubs[i % len(hubs)]}"),
        ("forgotten", lambda i: "/forgotten/"),
        ("forgotten, page 20", lambda i: "/forgotten/?page=20"),
        ("search, empty query (recent)", lambda i: "/search/"),
        ("search, page 3", lambda i: f"/search/?q={query(i)}&page=3"),
        ("audit log, arrivals", lambda i: "/audit/?kind=arrived"),
        *AGENT_PAGES,
    ]


def _yesterday() -> str:
    return (timezone.now().date() - timedelta(days=1)).isoformat()


# The pages that show what agents did (bench.agents_bench times these alone).
AGENT_PAGES: list[tuple[str, Callable[[int], str]]] = [
    ("agents", lambda i: "/agents/"),
    (
        "audit log, actor prefix + yesterday",
        lambda i: f"/audit/?actor=bench{i % AGENTS}&since={_yesterday()}&until={_yesterday()}",
    ),
    (
        "audit log, actor + day + recalled",
        lambda i: (
            f"/audit/?actor=agent:bench{i % AGENTS}&kind=recalled"
            f"&since={_yesterday()}&until={_yesterday()}"
        ),
    ),
    ("audit log, actor prefix, any day", lambda i: f"/audit/?actor=bench{i % AGENTS}"),
    (
        "audit CSV, actor + yesterday",
        lambda i: (
            f"/audit/export.csv?actor=bench{i % AGENTS}&since={_yesterday()}&until={_yesterday()}"
        ),
    ),
]
# Pages of the full table that agents' activity also weighs on (the overview's "since you last
# looked", the tokens page's snippets, the queue's muted line): timed again beside them.
AGENT_SHARED_PAGES = ("overview", "agent tokens", "review queue")


def run(sizes: list[int], *, only: list[str] | None = None, title: str = "") -> str:
    """The pages' table at each size; `only` names the pages to time (default: all)."""
    from dashboard.owner import ensure_owner

    lines = [
        title or "## Dashboard pages",
        "",
        "Server time per page (Django test Client, owner logged in; middleware, view, queries "
        f"and template), {REPEATS} fetches each after 3 warm-up fetches, on synthetic graphs with "
        f"5% of nodes decayed through the audit writer. Target: p95 <= {TARGET_P95_MS:.0f} ms.",
        "",
        "| nodes | page | p50 ms | p95 ms | target |",
        "|---:|---|---:|---:|---|",
    ]
    vocab = _vocabulary(random.Random(7))
    for n in sizes:
        rng = random.Random(n)
        path = graph_copy(n, "pages")
        with use_database(path):
            ids = _prepare(n, rng)
            _agent_activity(rng, ids["live"])
            # localhost: outside tests "testserver" is not an allowed host (grove/settings.py).
            client = Client(HTTP_HOST="localhost")
            client.force_login(ensure_owner())
            words = [" ".join(rng.sample(vocab[:400], 2)) for _ in range(REPEATS + 3)]
            pages = [p for p in _pages(rng, words, ids) if only is None or p[0] in only]
            for name, paths in pages:
                try:
                    samples = _time(client, paths)
                except Exception as error:  # report the page as failing; keep measuring others
                    lines.append(f"| {n:,} | {name} | - | - | **failed: {error!r:.80}** |")
                    print(f"  {n:,} {name}: FAILED {error!r}", flush=True)
                    continue
                p50, p95 = statistics.median(samples), _pct(samples, 0.95)
                ok = "ok" if p95 <= TARGET_P95_MS else "**over**"
                lines.append(f"| {n:,} | {name} | {p50:.1f} | {p95:.1f} | {ok} |")
                print(f"  {n:,} {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms", flush=True)
    return "\n".join(lines) + "\n"
