from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.errors import GroveError
from memory.sleep.run import STEPS, ensure_schedule, request_sleep, run_sleep


class Command(BaseCommand):
    help = "Run sleep now (or queue it for the worker, or install its nightly schedule)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="report, change nothing")
        parser.add_argument("--max-nodes", type=int, default=None, help="work limit per step")
        parser.add_argument("--step", choices=STEPS, default=None, help="run only this step")
        parser.add_argument("--enqueue", action="store_true", help="queue it for the worker")
        parser.add_argument(
            "--install-schedule", action="store_true", help="create/update the nightly schedule"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["install_schedule"]:
                schedule = ensure_schedule()
                self.stdout.write(f"schedule {schedule.name}: next run {schedule.next_run}")
                return
            kwargs = {
                "dry_run": options["dry_run"],
                "max_nodes": options["max_nodes"],
                "only_step": options["step"],
            }
            if options["enqueue"]:
                run = request_sleep(requested_by="manage.py", **kwargs)
                self.stdout.write(f"sleep run {run.pk} queued")
                return
            run = run_sleep(requested_by="manage.py", **kwargs)
        except GroveError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"sleep run {run.pk} {run.status}")
        self.stdout.write(json.dumps(run.steps, indent=2, default=str))
