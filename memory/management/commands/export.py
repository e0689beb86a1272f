from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.custody.ground_markdown import write_folder
from memory.custody.transfer import export


class Command(BaseCommand):
    help = (
        "Write the whole record (nodes, edges, vectors, events with their hash chain, recall logs, "
        "tokens, checkpoints, sleep runs) to a JSON-lines file, to move it to another database "
        "with `manage.py import` (memory/custody/transfer.py). Writers wait while it runs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "path", type=Path, nargs="?", help="the file to write (it must not exist)"
        )
        parser.add_argument(
            "--ground-markdown",
            type=Path,
            metavar="DIR",
            help="instead: what is true, one markdown file per ground node with its sources and "
            "dates, into DIR (new or empty)",
        )

    def handle(
        self, *args: Any, path: Path | None, ground_markdown: Path | None, **options: Any
    ) -> None:
        if ground_markdown is not None:
            if path is not None:
                raise CommandError("give a file or --ground-markdown DIR, not both")
            try:
                count = write_folder(ground_markdown)
            except FileExistsError as exc:
                raise CommandError(f"nothing written: {exc}") from exc
            self.stdout.write(
                f"wrote {count} ground node{'s' if count != 1 else ''} to {ground_markdown} "
                "(README.md lists them; readable by you alone)"
            )
            return
        if path is None:
            raise CommandError("give the file to write, or --ground-markdown DIR")
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
