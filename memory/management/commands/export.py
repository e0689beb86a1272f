from __future__ import annotations

import os
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
        # Created 0600 in the one call that creates it: a chmod afterwards would leave a moment
        # in which anyone may open the file, and it holds every sealed body.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            written = export(out)
        rows = ", ".join(f"{n} {label.split('.')[-1]}" for label, n in written.items())
        self.stdout.write(f"exported to {path} (mode 0600, readable by you alone): {rows}")
        self.stdout.write(
            "warning: the file holds every sealed and rejected body in the clear; keep it as "
            "private as the database itself."
        )
