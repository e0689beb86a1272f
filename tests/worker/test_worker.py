"""The real django-q2 worker and the real `serve` process, on a real SQLite file."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

from memory.models import Node
from tests._helpers import ROOT
from tests._helpers.processes import free_port, group_alive, link_from
from tests._helpers.wait import wait_for


@pytest.mark.worker
def test_the_real_worker_runs_an_enqueued_task(qcluster):
    from django_q.models import Success
    from django_q.tasks import async_task

    assert Node.objects.count() == 0
    task_id = async_task("dashboard.demo.load_demo")
    wait_for(lambda: Success.objects.filter(id=task_id).exists())
    assert Node.objects.count() > 10
    assert Success.objects.get(id=task_id).result > 10


@pytest.mark.worker
def test_serve_runs_web_and_worker_on_localhost_and_stops_both(tmp_path):
    env = {**os.environ, "GROVE_DATA_DIR": str(tmp_path)}
    env.pop("GROVE_DB_PATH", None)
    env.pop("PYTHONUNBUFFERED", None)  # serve must flush its own lines, as under make run
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([sys.executable, "manage.py", "demo"], cwd=ROOT, env=env, check=True)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # As when launched from a background shell: SIGINT arrives already ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        # A reader thread, so waiting for a line that never comes cannot block past wait_for.
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in server.stdout], daemon=True).start()
        seen: list[str] = []
        link = wait_for(lambda: link_from(lines, seen))
        assert link.startswith(f"http://127.0.0.1:{port}/login/link/")
        worker_pid = int(re.search(r"worker pid (\d+)", "".join(seen)).group(1))
        assert group_alive(worker_pid)  # the worker is running
        page = wait_for(lambda: _get(link))
        assert "Sign in as the owner" in page
        os.killpg(server.pid, signal.SIGINT)  # Ctrl-C: the whole process group
        assert server.wait(timeout=30) == 0
        # The whole cluster (main process, sentinel, workers) is gone, not only its main.
        wait_for(lambda: not group_alive(worker_pid), timeout=20)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return None


def test_serve_with_two_workers_answers_from_two_web_processes(tmp_path):
    env = {**os.environ, "GROVE_DATA_DIR": str(tmp_path)}
    env.pop("GROVE_DB_PATH", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "serve",
            "--port",
            str(port),
            "--workers",
            "2",
            "--no-worker",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children")
        wait_for(lambda: len(children.read_text().split()) == 2)
        for _ in range(6):  # each request is answered, whichever process accepts it
            assert "Sign in" in wait_for(lambda: _get(f"http://127.0.0.1:{port}/login/"))
        web = [int(pid) for pid in children.read_text().split()]
        os.killpg(server.pid, signal.SIGINT)
        assert server.wait(timeout=30) == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in web)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
