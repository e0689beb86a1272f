"""Run Grove: the web server on 127.0.0.1 and the django-q2 worker, stopped together on Ctrl-C."""

from __future__ import annotations

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
        from waitress import serve

        from grove.wsgi import application

        worker = None
        if not no_worker:
            worker = subprocess.Popen([sys.executable, "manage.py", "qcluster"])
        host = settings.GROVE_HOST
        self.stdout.write(f"Grove on http://{host}:{port}/  (worker pid {worker and worker.pid})")
        self.stdout.write(f"Sign in once with: http://{host}:{port}{login_path()}")
        self.stdout.write("Stop with Ctrl-C.")
        self.stdout.flush()  # a pipe is block-buffered: whoever waits for the link must see it

        def stop(*_):
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, stop)
        try:
            serve(application, host=host, port=port, threads=8, _quiet=True)
        except KeyboardInterrupt:
            pass
        finally:
            if worker is not None:
                worker.send_signal(signal.SIGINT)
                try:
                    worker.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    worker.kill()
            self.stdout.write("Grove stopped.")
