from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from memory.integrity import run_checks


class Command(BaseCommand):
    help = "Check Grove's invariants; exit non-zero on any violation (a line per check)."

    def handle(self, *args, **options) -> None:
        failed = 0
        for result in run_checks():
            status = "ok" if result.ok else f"FAIL ({len(result.violations)})"
            self.stdout.write(f"{result.name}: {status}")
            for violation in result.violations:
                self.stdout.write(f"  - {violation}")
            failed += not result.ok
        if failed:
            raise CommandError(f"{failed} integrity check(s) failed")
