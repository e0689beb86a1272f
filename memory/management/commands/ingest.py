from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.module_loading import import_string

from memory.errors import GroveError
from memory.importers import FORMATS, SESSION_FORMATS


class Command(BaseCommand):
    help = "Import a file of another format through the write path (e.g. --format locomo)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")
        parser.add_argument("--format", required=True, choices=sorted(FORMATS))
        parser.add_argument("--tz", default=None, help="time zone of dates that carry none")
        parser.add_argument("--domain", default=None, help="put everything in this domain")
        parser.add_argument(
            "--tools",
            choices=["lines", "skip"],
            default=None,
            help="agents' sessions: tool calls as short labelled lines (default) or skipped",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ingest = import_string(FORMATS[options["format"]])
        extra: dict[str, Any] = {}
        if options["tools"]:
            if options["format"] not in SESSION_FORMATS:
                raise CommandError(f"--tools is for {' and '.join(SESSION_FORMATS)} sessions")
            extra["tools"] = options["tools"]
        try:
            summary = ingest(options["path"], tz=options["tz"], domain=options["domain"], **extra)
        except GroveError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        # The summaries speak sentences (their __str__), never a dataclass repr.
        self.stdout.write(f"Imported {options['path']} as {options['format']}: {summary}")
