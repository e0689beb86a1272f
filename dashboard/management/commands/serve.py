"""Run Grove: the web server on 127.0.0.1 and the django-q2 worker, stopped together on Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from typing import Any, NoReturn

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.core.management.base import BaseCommand, CommandParser

from dashboard.owner import login_path


class Command(BaseCommand):
    help = "Serve the dashboard on 127.0.0.1 and run the worker beside it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=settings.GROVE_PORT)
        parser.add_argument("--no-worker", action="store_true")
        parser.add_argument(
            "--workers",
            type=int,
            default=1,
            help="web processes sharing the port (several need PostgreSQL to be worth it: on "
            "SQLite they still queue for one write lock); 8 threads each",
        )

    def handle(self, *args: Any, port: int, no_worker: bool, workers: int, **options: Any) -> None:
        from django.core.wsgi import get_wsgi_application
        from waitress import serve

        # Settings are already loaded by manage.py: the project's WSGI app without importing it.
        application = get_wsgi_application()

        worker = None if no_worker else self._start_worker()
        host = settings.GROVE_HOST
        self.stdout.write(
            f"Grove on http://{host}:{port}/  ({workers} web process(es), worker pid "
            f"{worker and worker.pid})"
        )
        self.stdout.write(f"Sign in once with: http://{host}:{port}{login_path()}")
        self.stdout.write("Stop with Ctrl-C.")
        self.stdout.flush()  # a pipe is block-buffered: whoever waits for the link must see it

        def stop(*_: object) -> NoReturn:
            raise KeyboardInterrupt

        # Both explicitly: a process started in the background inherits SIGINT as ignored, and
        # Ctrl-C must stop Grove however it was launched.
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        try:
            if workers > 1:
                inherited = () if worker is None else (self._lifeline,)
                _serve_processes(application, host, port, workers, inherited=inherited)
            else:
                serve(
                    application,
                    host=host,
                    port=port,
                    threads=8,
                    _quiet=True,
                    # waitress answers 413 from the Content-Length alone, before reading it.
                    max_request_body_size=settings.GROVE_MAX_REQUEST_BYTES + 1,  # refuses >=
                )
        except KeyboardInterrupt:
            pass
        finally:
            if worker is not None:
                _stop_worker(worker)
            self.stdout.write("Grove stopped.")

    def _start_worker(self) -> subprocess.Popen[bytes]:
        # Its own session: a terminal's Ctrl-C reaches only us, and we stop the worker once.
        # (Signalled twice, the cluster's main process can exit before its children.)
        # It holds the read end of a pipe only we can close: if we die, even by SIGKILL,
        # it reads EOF and stops (manage.py worker), so a restart never runs two clusters.
        lifeline, ours = os.pipe()
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "worker", "--parent-fd", str(lifeline)],
            start_new_session=True,
            pass_fds=(lifeline,),
        )
        os.close(lifeline)
        self._lifeline = ours  # held open for as long as this process lives
        return worker


def _stop_worker(worker: subprocess.Popen[bytes]) -> None:
    worker.send_signal(signal.SIGINT)
    with contextlib.suppress(subprocess.TimeoutExpired):
        worker.wait(timeout=15)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.pid, signal.SIGKILL)  # whatever of the cluster is left
    worker.wait()


def _serve_processes(
    application: WSGIHandler, host: str, port: int, count: int, *, inherited: tuple[int, ...]
) -> None:
    """`count` waitress processes accepting on one socket bound here (the kernel spreads the
    connections); each has its own database connections. Returns when interrupted, after
    stopping them.

    Each child closes `inherited` (the worker's lifeline: held by a child, it would keep the
    worker running after we are gone) and watches a lifeline of its own, the read end of a pipe
    whose write end only this process holds: when we die, even by SIGKILL, the kernel closes it,
    the read returns EOF and the child exits, so no orphan keeps the port. The worker's pipe,
    for the same reasons (manage.py worker): portable, and not tied to the forking thread."""
    from django.db import connections
    from waitress import serve

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    connections.close_all()  # never share a database connection across fork
    lifeline, ours = os.pipe()
    children = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:  # a web process: serve until told to stop, then leave without cleanup
            for fd in (ours, *inherited):
                os.close(fd)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us with SIGTERM
            signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
            threading.Thread(target=_exit_on_eof, args=(lifeline,), daemon=True).start()
            with contextlib.suppress(KeyboardInterrupt):
                serve(
                    application,
                    sockets=[sock],
                    threads=8,
                    _quiet=True,
                    max_request_body_size=settings.GROVE_MAX_REQUEST_BYTES + 1,
                )
            os._exit(0)
        children.append(pid)
    os.close(lifeline)
    try:
        for pid in children:
            os.waitpid(pid, 0)
    finally:
        for pid in children:
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
        os.close(ours)


def _exit_on_eof(fd: int) -> None:
    """Block until the parent's end of the pipe closes (nothing is ever written), then exit at
    once: the parent is gone, and a web process without it must not hold the port."""
    while os.read(fd, 1):
        pass
    os._exit(0)
