from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.custody.drift import find_drift


class Command(BaseCommand):
    help = (
        "Report ground nodes whose source file (or vault section) is missing or no longer "
        "matches what was imported; exit non-zero on any drift."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base", default="", help="resolve relative sources against this")

    def handle(self, *args: Any, base: str = "", **options: Any) -> None:
        drift = find_drift(base=Path(base) if base else None)
        for item in drift:
            if item["problem"] == "missing":
                self.stdout.write(f"node {item['id']}: {item['path']} is missing")
            elif item["problem"] == "section missing":
                self.stdout.write(f"node {item['id']}: the section {item['path']} is gone")
            else:
                self.stdout.write(
                    f"node {item['id']}: {item['path']} changed: recorded {item['recorded']}, "
                    f"now {item['current']}"
                )
        if drift:
            raise CommandError(f"{len(drift)} ground node(s) drifted from their files")
        self.stdout.write("no drift")
