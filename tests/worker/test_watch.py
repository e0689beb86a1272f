"""`manage.py watch` with the real django-q2 worker, on a real SQLite file, a session growing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from django.db import connection

from memory.models import WatchScan
from memory.recall import recall
from tests._helpers import ROOT
from tests._helpers.realdb import database_env
from tests._helpers.wait import wait_for


def _turn(uuid: str, kind: str, text: str) -> str:
    return json.dumps(
        {
            "type": kind,
            "uuid": uuid,
            "sessionId": "s-1",
            "cwd": "/home/ada/code/house",
            "isSidechain": False,
            "timestamp": "2025-05-26T10:00:00Z",
            "message": {"role": kind, "content": [{"type": "text", "text": text}]},
        }
    )


def _found(words: str) -> bool:
    return any(words in hit["excerpt"] for hit in recall(words, scope="wild", limit=5))


@pytest.mark.worker
def test_watch_brings_a_growing_session_in_through_the_worker(qcluster, tmp_path):
    folder = tmp_path / "projects" / "-home-ada-code-house"
    folder.mkdir(parents=True)
    session = folder / "s-1.jsonl"
    session.write_text(_turn("u1", "user", "Where is the stopcock for the kitchen?") + "\n")
    env = {
        **os.environ,
        **database_env(connection.settings_dict["NAME"]),
        "GROVE_WATCH": f"claude-code:{tmp_path / 'projects'}",
        "GROVE_WATCH_SECONDS": "1",  # the shipped default is three minutes
    }
    watcher = subprocess.Popen(
        [sys.executable, "manage.py", "watch"], cwd=ROOT, env=env, start_new_session=True
    )
    try:
        wait_for(lambda: _found("stopcock"))
        with session.open("a") as handle:  # the agent answers while the worker runs
            handle.write(_turn("a1", "assistant", "Under the sink, behind the bleach.") + "\n")
        wait_for(lambda: _found("bleach"))
        assert WatchScan.objects.filter(turns_new__gt=0).count() == 2
    finally:
        os.killpg(watcher.pid, signal.SIGINT)
        watcher.wait(timeout=20)
