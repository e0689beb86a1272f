from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.custody.transfer import TransferError, import_into_empty


class Command(BaseCommand):
    help = (
        "Load a `manage.py export` file into this freshly migrated, empty database, keeping every "
        "id, then verify the counts, the whole hash chain and every body hash before committing "
        "(memory/custody/transfer.py). Copy GROVE_SCROLL_DIR along for the pairs' scrolls."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="a file written by manage.py export")

    def handle(self, *args: Any, path: Path, **options: Any) -> None:
        try:
            loaded = import_into_empty(path)
        except (TransferError, OSError) as exc:
            raise CommandError(f"nothing imported: {exc}") from None
        rows = ", ".join(f"{n} {label.split('.')[-1]}" for label, n in loaded.items())
        checked = "hash chain, body hashes, arrivals, token grants"
        self.stdout.write(f"imported and verified ({checked}): {rows}")
