from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from dashboard.owner import login_path


class Command(BaseCommand):
    help = "Print a one-time link that signs the owner in."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"http://{settings.GROVE_HOST}:{settings.GROVE_PORT}{login_path()}")
