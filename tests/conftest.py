from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from memory.models import Edge, Event, Node, Vector
from tests._helpers import ROOT
from tests._helpers.isolation import own_test_database
from tests._helpers.realdb import database_env, fresh_database

# Playwright drives the live server from its own thread.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_configure(config) -> None:
    from django.conf import settings

    # Transactional tests end with a flush, which must get past the no-delete triggers.
    settings.GROVE_ALLOW_FLUSH = True
    if "MUTANT_UNDER_TEST" in os.environ:
        own_test_database(settings.DATABASES["default"], connection.vendor, os.getpid())


# tests/_helpers/mcp.py's helpers that run the MCP server in a process of its own.
_STARTS_A_SERVER = {
    "mcp_session",
    "server_params",
    "wire_replies",
    "grove_server",
    "mcp_http_session",
}


def pytest_collection_modifyitems(config, items) -> None:
    """Tests about one engine run only on it (GROVE_DATABASE_URL selects PostgreSQL)."""
    vendor = "postgres" if os.environ.get("GROVE_DATABASE_URL") else "sqlite"
    other = {"sqlite": "postgres_only", "postgres": "sqlite_only"}[vendor]
    skip = pytest.mark.skip(reason=f"{other.replace('_', ' ')} (this run is on {vendor})")
    for item in items:
        if other in item.keywords:
            item.add_marker(skip)
    if "MUTANT_UNDER_TEST" in os.environ:
        # make mutate: an MCP server run in a subprocess breaks mutmut's output capture (closed
        # stderr) and its trampoline cannot see it; the MCP tests that call the server in
        # process (the tools, the HTTP view through Django's client) run.
        out = pytest.mark.skip(reason="MCP subprocess tests are left out of mutant runs")
        for item in items:
            if "mcp" in item.nodeid.lower() and _STARTS_A_SERVER & set(
                getattr(getattr(item, "module", None), "__dict__", {})
            ):
                item.add_marker(out)
        _fastest_first(items)


def _fastest_first(items: list[pytest.Item]) -> None:
    """make mutate runs each mutant's tests with -x, so a kill costs the tests before the first
    failing one: the fastest go first, by the durations mutmut recorded (its stats file, in the
    directory it runs from). The order decides only the time, never a verdict. pytest-django's
    groups (database tests, then transactional ones, then the rest) keep their order."""
    try:
        durations = json.loads(Path("mutmut-stats.json").read_text())["duration_by_test"]
    except (OSError, ValueError, KeyError):
        return

    def group(item: pytest.Item) -> int:
        marker = item.get_closest_marker("django_db")
        names = getattr(item, "fixturenames", ())
        if "transactional_db" in names or "live_server" in names:
            return 1
        if marker is not None and (marker.kwargs.get("transaction") or marker.args[:1] == (True,)):
            return 1
        return 0 if marker is not None or "db" in names else 2

    items.sort(key=lambda item: (group(item), durations.get(item.nodeid, float("inf"))))


@pytest.fixture(autouse=True)
def chain_anchor(tmp_path, settings) -> Path:
    """Each test anchors its chain checkpoints in a file of its own (memory/chain.py)."""
    settings.GROVE_CHAIN_ANCHOR = tmp_path / "chain-anchor.jsonl"
    return settings.GROVE_CHAIN_ANCHOR


@pytest.fixture(autouse=True)
def _decay_age_14_days(settings) -> None:
    """The decay tests speak of 40-day-old nodes against a 14-day threshold: pin it, so the
    shipped default (chosen by the forgetting bench) can move without rewriting them."""
    settings.GROVE_DECAY_MIN_AGE_DAYS = 14


@pytest.fixture(autouse=True)
def _own_model_dir(tmp_path, settings):
    """Each test its own semantic model directory: a fitted model never outlives its test."""
    from memory.vectors import semantic

    settings.GROVE_MODEL_DIR = tmp_path / "models"
    semantic.forget()
    yield
    semantic.forget()


@pytest.fixture
def root_note(db) -> Node:
    """A journal entry to hang origins on (journal needs an origin too, so it cites a scroll-less
    import node written first)."""
    from memory.write import write_node

    seed = write_node(
        body="Seed import: the owner's notebook.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        origins=[],
        source="notebook.md",
    )
    return seed.node


@pytest.fixture
def make_note(db, root_note) -> Callable[..., Node]:
    """Write a note through the real write path; age it by the store clock if asked."""
    from memory.write import write_node

    def make(body: str, *, days_old: float = 0, **fields) -> Node:
        fields.setdefault("kind", "note")
        fields.setdefault("jurisdiction", "home")
        fields.setdefault("signature", "owner")
        fields.setdefault("origins", [{"id": root_note.pk, "relation": "derived_from"}])
        created_at = timezone.now() - timedelta(days=days_old) if days_old else None
        return write_node(body=body, created_at=created_at, **fields).node

    return make


@pytest.fixture
def lone(make_note):
    """A node with no edges at all: internet kinds may name a source instead of an origin."""

    def make(body: str, *, days_old: float = 0, **fields) -> Node:
        fields.setdefault("kind", "internet")
        fields.setdefault("jurisdiction", "wild")
        fields.setdefault("origins", [])
        fields.setdefault("source", "https://example.org/page")
        return make_note(body, days_old=days_old, **fields)

    return make


@pytest.fixture
def stale_note(make_note) -> Node:
    """An import 40 days old, never read, with no neighbour: the decay gate selects it now."""
    return make_note(
        "Old and never read.",
        days_old=40,
        origins=[],
        kind="import",
        jurisdiction="wild",
        source="old.md",
    )


@pytest.fixture
def placed(make_note, root_note) -> Callable[..., Node]:
    """Notes with hand-made unit vectors at an angle (tests/_helpers/vectors.place), for the
    sleep steps that compare vectors (cross-link, consolidate); the root note points away."""
    from tests._helpers.vectors import place

    place(root_note, 180)  # opposite the others, so it is linked to nothing

    def make(degrees: float, body: str | None = None, **fields) -> Node:
        return place(make_note(body or f"Note at {degrees} degrees.", **fields), degrees)

    return make


@pytest.fixture
def counts(db) -> Callable[[], dict[str, int]]:
    """Row counts of everything a write may touch, to prove a refusal stored nothing."""

    def snapshot() -> dict[str, int]:
        with connection.cursor() as cursor:
            # The word index: FTS5's rows on SQLite, the generated tsvectors on PostgreSQL.
            cursor.execute(
                "SELECT count(*) FROM memory_node WHERE body_tsv IS NOT NULL"
                if connection.vendor == "postgresql"
                else "SELECT count(*) FROM memory_node_fts_docsize"
            )
            fts = cursor.fetchone()[0]
        return {
            "nodes": Node.objects.count(),
            "edges": Edge.objects.count(),
            "events": Event.objects.count(),
            "vectors": Vector.objects.count(),
            "fts": fts,
        }

    return snapshot


# --- Browser tests: real Chromium through Playwright against the live server ----------------

ARTIFACTS = Path(os.environ.get("GROVE_ARTIFACTS", ROOT / "test-results"))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's Chromium (Playwright cannot download its own here); quiet on a closed network."""
    executable = (
        os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    return {
        **browser_type_launch_args,
        "executable_path": executable,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }


@pytest.fixture
def screenshot() -> Callable[..., Path]:
    """Save a full-page screenshot under test-results/screenshots/ (a test artifact)."""

    def take(page, name: str) -> Path:
        path = ARTIFACTS / "screenshots" / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture
def owner_page(live_server, page):
    """A Chromium page signed in as the owner through the one-time login link."""
    from dashboard.owner import login_path

    page.goto(live_server.url + login_path())
    page.get_by_role("button", name="Sign in as the owner").click()
    page.wait_for_url(live_server.url + "/")
    return page


@pytest.fixture
def owner_client(client, db):
    """The Django test client signed in as the owner."""
    from dashboard.owner import ensure_owner

    client.force_login(ensure_owner())
    return client


@pytest.fixture
def real_db(tmp_path, tmp_path_factory, django_db_blocker):
    """A fresh migrated SQLite file of the test's own, for tests that start other processes
    (races, file locks, MCP); yields its path (on PostgreSQL, a fresh database's name)."""
    yield from fresh_database(tmp_path, tmp_path_factory, django_db_blocker)


# --- The real django-q2 worker ------------------------------------------------------------


@pytest.fixture
def qcluster(transactional_db, tmp_path):
    """A real `manage.py qcluster` process on this test's SQLite file; stopped afterwards.

    It shares GROVE_DATA_DIR with the tests (so the same secret key signs and checks queued
    tasks) and points GROVE_DB_PATH at the test database. Yields the Popen; its log is
    tmp_path/worker.log.
    """
    import signal
    import subprocess
    import sys

    env = {
        **os.environ,
        **database_env(connection.settings_dict["NAME"]),
        "GROVE_CHAIN_ANCHOR": str(tmp_path / "chain-anchor.jsonl"),  # the test's own anchor
    }
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    yield worker
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)  # the cluster's main process stops its children
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    log.close()
