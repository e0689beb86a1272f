from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.custody.chain_verify import last_checkpoint
from memory.custody.integrity import run_checks


class Command(BaseCommand):
    help = (
        "Check Grove's invariants and its hash chain; exit non-zero on any violation (a line per "
        "check). The chain is verified from the last checkpoint, or from the start with --full."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--full", action="store_true", help="verify the hash chain from its first event"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        failed = 0
        for result in run_checks(full_chain=options["full"]):
            status = "ok" if result.ok else f"FAIL ({len(result.violations)})"
            self.stdout.write(f"{result.name}: {status}")
            for violation in result.violations:
                self.stdout.write(f"  - {violation}")
            failed += not result.ok
        if failed:
            raise CommandError(f"{failed} integrity check(s) failed")
        if mark := last_checkpoint():
            self.stdout.write(f"record verified through event {mark.event_id}")
