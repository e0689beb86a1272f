from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from dashboard.demo import load_demo


class Command(BaseCommand):
    help = "Load a small demo memory when the database is empty."

    def handle(self, *args: Any, **options: Any) -> None:
        written = load_demo()
        self.stdout.write(
            f"Demo memory: {written} nodes written"
            if written
            else "Demo memory: database not empty, nothing written"
        )
