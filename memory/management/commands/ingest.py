from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.module_loading import import_string

from memory.errors import GroveError
from memory.importers import FORMATS


class Command(BaseCommand):
    help = "Import a file of another format through the write path (e.g. --format locomo)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")
        parser.add_argument("--format", required=True, choices=sorted(FORMATS))
        parser.add_argument("--tz", default=None, help="time zone of dates that carry none")
        parser.add_argument("--domain", default=None, help="put everything in this domain")

    def handle(self, *args: Any, **options: Any) -> None:
        ingest = import_string(FORMATS[options["format"]])
        try:
            summary = ingest(options["path"], tz=options["tz"], domain=options["domain"])
        except GroveError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        # The summaries speak sentences (their __str__), never a dataclass repr.
        self.stdout.write(f"Imported {options['path']} as {options['format']}: {summary}")
