"""A LoCoMo-shaped import at the scale of the five dev conversations (2,888 nodes: 128 sessions
and 2,760 turns), generated, never copied: the evaluation data stays out of the project and CI
has no copy of it. Written through the real importer (memory/importers/locomo.ingest) into a
migrated database built once per test session, then copied for each test that asks.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from datetime import timedelta
from pathlib import Path

import time_machine
from django.db import connection
from django.utils import timezone

from bench.synthetic import use_database
from tests._helpers import realdb

# The dev conversations' shape: (sample id, sessions, turns), 2,760 turns in 128 sessions.
SHAPE = (
    ("conv-26", 19, 419),
    ("conv-30", 19, 369),
    ("conv-41", 32, 663),
    ("conv-42", 29, 629),
    ("conv-43", 29, 680),
)
NODES = sum(sessions + turns for _, sessions, turns in SHAPE)  # 2,888
SPEAKERS = (("Ada", "Bram"), ("Cleo", "Dov"), ("Esme", "Finn"), ("Gil", "Hana"), ("Ivo", "Juno"))
AGE_DAYS = 151  # past the age threshold, as a real import is once it is old enough
_WORDS = (
    "garden", "weather", "dinner", "school", "painting", "music", "trip", "family", "dog",
    "work", "book", "movie", "beach", "city", "friend", "market", "coffee", "river", "hike",
    "recipe", "concert", "museum", "bike", "class", "project", "weekend",
)  # fmt: skip
# One rare word, in one turn of one conversation: what the owner looks that turn up by.
RARE = {"conv-41": "lighthouse"}


def sample(sample_id: str, sessions: int, turns: int, speakers: tuple[str, str]) -> dict:
    """One LoCoMo sample: `turns` spread over `sessions`, speakers alternating, dated a week
    apart, each turn a plain sentence of everyday words."""
    rng = random.Random(sample_id)
    sizes = [turns // sessions + (i < turns % sessions) for i in range(sessions)]
    conversation: dict = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    rare = RARE.get(sample_id)
    for number, size in enumerate(sizes, start=1):
        day = 1 + (number * 7) % 28
        conversation[f"session_{number}_date_time"] = f"1:56 pm on {day} May, 2023"
        conversation[f"session_{number}"] = [
            {
                "speaker": speakers[i % 2],
                "dia_id": f"D{number}:{i + 1}",
                "text": f"{speakers[i % 2]} talks about the {rng.choice(_WORDS)} and the "
                f"{rng.choice(_WORDS)}, session {number} turn {i + 1}.",
            }
            for i in range(size)
        ]
    if rare:  # the middle session's third turn
        turn = conversation[f"session_{sessions // 2}"][2]
        turn["text"] = f"{turn['speaker']} saw the old {rare} in the storm last night."
    return {"sample_id": sample_id, "conversation": conversation, "qa": []}


def write_file(path: Path) -> Path:
    """The five conversations as one LoCoMo JSON file."""
    samples = [
        sample(sid, sessions, turns, SPEAKERS[i]) for i, (sid, sessions, turns) in enumerate(SHAPE)
    ]
    path.write_text(json.dumps(samples))
    return path


def import_aged(path: Path) -> None:
    """Import the file through the real importer, on a store clock AGE_DAYS back (the importer
    stamps nodes and edges with it), so every node is past the age threshold now."""
    from memory.importers.locomo import ingest

    with time_machine.travel(timezone.now() - timedelta(days=AGE_DAYS), tick=True):
        summary = ingest(path, tz="UTC")
    assert summary.turns == NODES - sum(s for _, s, _ in SHAPE), summary


STAGES = ("imported", "held", "forgotten")
_BUILT: dict[str, Path | str] = {}


def template(stage: str, tmp_path_factory, django_db_blocker) -> Path | str:
    """A migrated database at `stage`, built once per session (a SQLite file, or on PostgreSQL
    a database to clone), each stage from the one before:
    imported: the aged import; nothing has read or kept it, no sleep has run;
    held: one sleep ran, and its guard on mass forgetting held every pending decay back;
    forgotten: the owner released them, and the next sleep let go of all 2,888."""
    built = _BUILT.get(stage)
    if built is not None and (isinstance(built, str) or built.exists()):
        return built
    index = STAGES.index(stage)
    source = template(STAGES[index - 1], tmp_path_factory, django_db_blocker) if index else None
    folder = tmp_path_factory.mktemp(f"locomo-{stage}")
    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            name = f"{connection.settings_dict['NAME']}_locomo_{stage}"
            realdb.pg_admin(f'DROP DATABASE IF EXISTS "{name}"')
            realdb.pg_admin(
                f'CREATE DATABASE "{name}" TEMPLATE "{source or realdb.pg_migrated_template()}"'
            )
            with use_database(name):
                _advance(stage, folder)
            _BUILT[stage] = name
        else:
            path = folder / "grove.sqlite3"
            shutil.copyfile(source or realdb.migrated_template(tmp_path_factory), path)
            with use_database(path):
                _advance(stage, folder)
            db = sqlite3.connect(path)
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.close()
            _BUILT[stage] = path
    return _BUILT[stage]


def _advance(stage: str, folder: Path) -> None:
    from memory.forgetting import release_held
    from memory.sleep.run import run_sleep

    if stage == "imported":
        import_aged(write_file(folder / "locomo.json"))
        return
    if stage == "forgotten":
        release_held(actor="owner")
    run = run_sleep(requested_by="test")
    decay = run.steps["decay"]
    expected = (0, NODES) if stage == "held" else (NODES, 0)
    assert (decay["count"], decay["held_back"]) == expected, decay


def copy_of(built: Path | str, tmp_path: Path, django_db_blocker):
    """Point Django (the test's thread and the live server's) at a fresh copy of `built` for
    the test; yields the copy's path or name."""
    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            name = f"{connection.settings_dict['NAME']}_locomo_{abs(hash(str(tmp_path))) % 10**8}"
            realdb.pg_admin(f'DROP DATABASE IF EXISTS "{name}"')
            realdb.pg_admin(f'CREATE DATABASE "{name}" TEMPLATE "{built}"')
            _end_other_sessions()
            try:
                with use_database(name):
                    yield name
            finally:
                realdb.pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        path = tmp_path / "grove.sqlite3"
        shutil.copyfile(built, path)
        with use_database(path):
            yield path


def _end_other_sessions() -> None:
    """End the live server thread's persistent PostgreSQL session (CONN_MAX_AGE) on the test
    database, so its health check reconnects, to the copy, on its next request."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
