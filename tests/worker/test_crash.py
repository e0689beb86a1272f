"""Crash safety with the real django-q2 worker: SIGKILL mid-sleep loses no audit trail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from django.conf import settings

from bench.synthetic import build_graph, use_database
from memory.custody.integrity import run_checks
from memory.models import SleepRun
from memory.sleep.run import request_sleep, run_sleep
from tests._helpers import ROOT
from tests._helpers.wait import wait_for


def violations() -> dict[str, list[str]]:
    return {r.name: r.violations for r in run_checks() if not r.ok}


@pytest.mark.worker
@pytest.mark.sqlite_only  # bench.synthetic.build_graph writes SQLite files only (so far)
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_sleep_leaves_the_record_whole(tmp_path):
    # Its own file: a 20k-node graph takes the worker seconds to sleep through.
    path = tmp_path / "crash.sqlite3"
    build_graph(path, 20_000)
    env = {
        **os.environ,
        "GROVE_DB_PATH": str(path),
        "GROVE_DATA_DIR": str(tmp_path),
        "GROVE_LOG_LEVEL": "INFO",
        # Tasks are signed with the secret key: the worker must share ours.
        "GROVE_SECRET_KEY": settings.SECRET_KEY,
    }
    with use_database(path):
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=ROOT,
            env=env,
            start_new_session=True,
            stdout=(tmp_path / "worker.log").open("w"),
            stderr=subprocess.STDOUT,
        )
        try:
            run = request_sleep(requested_by="test")

            def progressed() -> bool:
                run.refresh_from_db()
                return run.status == "running" and run.current_step not in ("", "embed")

            wait_for(progressed, timeout=120)
            assert run.status == "running"
        finally:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        run.refresh_from_db()
        assert run.status == "running"  # nobody has noticed yet

        assert violations() == {}

        after = run_sleep(requested_by="test")
        run.refresh_from_db()
        assert after.status == "done"
        assert run.status == "failed" and "worker died mid-run" in run.error
        assert list(SleepRun.objects.order_by("id").values_list("status", flat=True)) == [
            "failed",
            "done",
        ]
        assert violations() == {}
