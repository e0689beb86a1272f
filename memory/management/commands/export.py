from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memory.custody.transfer import export


class Command(BaseCommand):
    help = (
        "Write the whole record (nodes, edges, vectors, events with their hash chain, recall logs, "
        "tokens, checkpoints, sleep runs) to a JSON-lines file, to move it to another database "
        "with `manage.py import` (memory/custody/transfer.py). Writers wait while it runs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the file to write (it must not exist)")

    def handle(self, *args: Any, path: Path, **options: Any) -> None:
        with path.open("x", encoding="utf-8") as out:
            written = export(out)
        rows = ", ".join(f"{n} {label.split('.')[-1]}" for label, n in written.items())
        self.stdout.write(f"exported to {path}: {rows}")
