"""Run Grove: the web server on 127.0.0.1 and the django-q2 worker, stopped together on Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

from django.conf import settings
from django.core.management.base import BaseCommand

from dashboard.owner import login_path


class Command(BaseCommand):
    help = "Serve the dashboard on 127.0.0.1 and run the worker beside it."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--port", type=int, default=settings.GROVE_PORT)
        parser.add_argument("--no-worker", action="store_true")

    def handle(self, *args, port: int, no_worker: bool, **options) -> None:
        from django.core.wsgi import get_wsgi_application
        from waitress import serve

        # Settings are already loaded by manage.py: the project's WSGI app without importing it.
        application = get_wsgi_application()

        worker = None
        if not no_worker:
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
        host = settings.GROVE_HOST
        self.stdout.write(f"Grove on http://{host}:{port}/  (worker pid {worker and worker.pid})")
        self.stdout.write(f"Sign in once with: http://{host}:{port}{login_path()}")
        self.stdout.write("Stop with Ctrl-C.")
        self.stdout.flush()  # a pipe is block-buffered: whoever waits for the link must see it

        def stop(*_):
            raise KeyboardInterrupt

        # Both explicitly: a process started in the background inherits SIGINT as ignored, and
        # Ctrl-C must stop Grove however it was launched.
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        try:
            serve(
                application,
                host=host,
                port=port,
                threads=8,
                _quiet=True,
                # waitress answers 413 from the Content-Length alone, before reading the body.
                max_request_body_size=settings.GROVE_MAX_REQUEST_BYTES + 1,  # it refuses >=
            )
        except KeyboardInterrupt:
            pass
        finally:
            if worker is not None:
                worker.send_signal(signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    worker.wait(timeout=15)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(worker.pid, signal.SIGKILL)  # whatever of the cluster is left
                worker.wait()
            self.stdout.write("Grove stopped.")
