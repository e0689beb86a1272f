from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.errors import GroveError
from memory.importers import watch


class Command(BaseCommand):
    help = (
        "Watch the coding agents' session folders (GROVE_WATCH): every GROVE_WATCH_SECONDS the "
        "worker imports what changed. --once scans here and now; --install-schedule leaves it "
        "to the worker's django-q2 schedule."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--once", action="store_true", help="scan once, here, and say what came"
        )
        parser.add_argument(
            "--install-schedule",
            action="store_true",
            help="create/update (or, with nothing watched, remove) the worker's watch schedule",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            watched = watch.folders()
            if options["install_schedule"]:
                schedule = watch.ensure_schedule()
                self.stdout.write(
                    f"schedule {schedule.name}: every {schedule.minutes} min"
                    if schedule
                    else "nothing watched (GROVE_WATCH is empty): no watch schedule"
                )
                return
        except GroveError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        if not watched:
            from memory.importers import claude_code, codex

            raise CommandError(
                "nothing to watch: set GROVE_WATCH, e.g. "
                f"claude-code:{claude_code.default_folder()},codex:{codex.default_folder()}"
            )
        if options["once"]:
            self._say(watch.scan(watched=watched))
            return
        self._loop(watched)

    def _loop(self, watched: list[watch.Folder]) -> None:
        from django_q.tasks import async_task, fetch

        every = settings.GROVE_WATCH_SECONDS
        names = ", ".join(str(folder) for folder in watched)
        self.stdout.write(f"watching {names} every {every} s (the worker imports; Ctrl-C stops)")
        pending: str | None = None
        try:
            while True:
                # One scan in the queue at a time: a slow scan is never stacked on.
                done = fetch(pending) if pending else None
                if done is not None:
                    self.stdout.write(f"scan: {done.result if done.success else 'failed'}")
                if pending is None or done is not None:
                    pending = async_task("memory.tasks.watch_scan", settings.GROVE_WATCH)
                time.sleep(every)
        except KeyboardInterrupt:
            self.stdout.write("stopped")

    def _say(self, scan: Any) -> None:
        self.stdout.write(
            f"scanned {scan.files_seen} files: {scan.files_changed} changed, "
            f"{scan.turns_new} new turns"
        )
        for error in scan.errors:
            self.stdout.write(f"  ! {error}")
