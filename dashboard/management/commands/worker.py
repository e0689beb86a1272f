"""The django-q2 cluster as `serve` runs it: it stops when `serve` is gone, however it went.

`serve` hands its child the read end of a pipe whose write end only `serve` holds. The kernel
closes that end when `serve` exits for any reason, SIGKILL included, so a read returning EOF
means "the parent is gone". Chosen over PR_SET_PDEATHSIG (Linux-only, and tied to the thread
that forked, not the process) and over polling getppid (a delay and a wake-up every second).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

GRACE_SECONDS = 15  # as serve's own stop: the cluster finishes a task in hand, then goes


def _watch(fd: int) -> None:
    """Block until the parent's end of the pipe closes, then stop the cluster: SIGINT first (its
    graceful stop), then SIGKILL to the whole process group if it has not gone by then."""
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while pipe.read(1):
            pass  # nothing is ever written; only EOF matters
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(GRACE_SECONDS)
    os.killpg(os.getpgid(0), signal.SIGKILL)


class Command(BaseCommand):
    help = "Run the worker (qcluster) and stop it when the process holding --parent-fd is gone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--parent-fd", type=int, required=True)

    def handle(self, *args: Any, parent_fd: int, **options: Any) -> None:
        threading.Thread(target=_watch, args=(parent_fd,), daemon=True, name="parent").start()
        call_command("qcluster")
