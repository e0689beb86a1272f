"""The real django-q2 worker and the real `serve` process, on a real SQLite file."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
from _wait import wait_for

from memory.models import Node

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.worker
def test_the_real_worker_runs_an_enqueued_task(qcluster):
    from django_q.models import Success
    from django_q.tasks import async_task

    assert Node.objects.count() == 0
    task_id = async_task("dashboard.demo.load_demo")
    wait_for(lambda: Success.objects.filter(id=task_id).exists())
    assert Node.objects.count() > 10
    assert Success.objects.get(id=task_id).result > 10


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    )
    try:
        # A reader thread, so waiting for a line that never comes cannot block past wait_for.
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in server.stdout], daemon=True).start()
        seen: list[str] = []
        link = wait_for(lambda: _link_from(lines, seen))
        assert link.startswith(f"http://127.0.0.1:{port}/login/link/")
        worker_pid = int(re.search(r"worker pid (\d+)", "".join(seen)).group(1))
        os.kill(worker_pid, 0)  # the worker process is alive
        page = wait_for(lambda: _get(link))
        assert "Sign in as the owner" in page
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0
        wait_for(lambda: not _alive(worker_pid), timeout=20)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)


def _link_from(lines: queue.Queue, seen: list[str]) -> str | None:
    try:
        line = lines.get(timeout=0.5)
    except queue.Empty:
        return None
    seen.append(line)
    match = re.search(r"(http://\S+/login/link/\S+)", line)
    return match.group(1) if match else None


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) counts as gone.
    return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
