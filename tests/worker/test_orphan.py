"""Transport faults of the real `serve` process: SIGKILL of serve leaves no worker behind, and
serve's web processes die with it, and waitress refuses an oversized body from its
Content-Length, before reading it."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading

import pytest

from tests._helpers import ROOT
from tests._helpers.processes import free_port, group_alive, link_from
from tests._helpers.wait import wait_for


def _env(tmp_path) -> dict[str, str]:
    env = {**os.environ, "GROVE_DATA_DIR": str(tmp_path), "GROVE_MAX_REQUEST_BYTES": "1000"}
    env.pop("GROVE_DB_PATH", None)
    env.pop("PYTHONUNBUFFERED", None)
    return env


def _serve(tmp_path, *extra: str, port: int = 0) -> tuple[subprocess.Popen, list[str], int]:
    env = _env(tmp_path)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    port = port or free_port()
    command = [sys.executable, "manage.py", "serve", "--port", str(port), *extra]
    return *_started(command, env), port


def _make_run(tmp_path, port: int) -> tuple[subprocess.Popen, list[str]]:
    """What a person types: `make run` (setup, migrate, demo, the sleep schedule, serve), on
    `port` through GROVE_PORT, the setting serve's --port defaults to."""
    env = {**_env(tmp_path), "GROVE_PORT": str(port)}
    for inherited in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS"):  # when the suite runs under make
        env.pop(inherited, None)
    return _started(["make", "--no-print-directory", "run"], env)


def _started(command: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, list[str]]:
    """The process, once it printed its sign-in link (or ended), and its lines so far."""
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in server.stdout], daemon=True).start()
    seen: list[str] = []
    wait_for(lambda: link_from(lines, seen) or server.poll() is not None, timeout=180)
    return server, seen


@pytest.mark.worker
def test_sigkill_of_serve_leaves_no_worker_behind(tmp_path):
    server, seen, _ = _serve(tmp_path)
    worker_pid = int(re.search(r"worker pid (\d+)", "".join(seen)).group(1))
    try:
        wait_for(lambda: group_alive(worker_pid))
        os.kill(server.pid, signal.SIGKILL)  # serve alone: no Ctrl-C reaches the worker
        server.wait(timeout=30)
        wait_for(lambda: not group_alive(worker_pid), timeout=60)
    finally:
        if group_alive(worker_pid):
            os.killpg(worker_pid, signal.SIGKILL)


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 2) as conn:
        conn.sendall(b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return conn.recv(12).startswith(b"HTTP/1.1")
    return False


@pytest.mark.worker
def test_sigkill_of_serve_with_web_processes_leaves_no_orphan_and_make_run_starts(tmp_path):
    server, seen, port = _serve(tmp_path, "--workers", "3")
    worker_pid = int(re.search(r"worker pid (\d+)", "".join(seen)).group(1))
    again = None
    try:
        wait_for(lambda: _answers(port))
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        # Nothing of the first run survives: neither a web process (serve's group) nor the worker.
        wait_for(lambda: not group_alive(server.pid) and not group_alive(worker_pid), timeout=40)
        again, said = _make_run(tmp_path, port)
        wait_for(lambda: _answers(port) or again.poll() is not None)
        assert again.poll() is None, "".join(said)  # it bound the port on the first try
        again_worker = int(re.search(r"worker pid (\d+)", "".join(said)).group(1))
    finally:
        for pgid in (server.pid, worker_pid, again and again.pid):
            if pgid and group_alive(pgid):
                os.killpg(pgid, signal.SIGKILL)
    wait_for(lambda: not group_alive(again_worker), timeout=40)  # its worker went with it


@pytest.mark.worker
def test_waitress_refuses_an_oversized_body_before_reading_it(tmp_path):
    server, _, port = _serve(tmp_path, "--no-worker")
    try:
        with socket.create_connection(("127.0.0.1", port)) as conn:
            conn.settimeout(30)  # guards a hang only: the body below is never sent
            conn.sendall(
                b"POST /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 50000000\r\n\r\n"
            )
            status = conn.recv(200).split(b"\r\n", 1)[0]
        assert status == b"HTTP/1.1 413 Request Entity Too Large"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
