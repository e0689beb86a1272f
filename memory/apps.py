from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.core import checks


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        checks.register(widths_hold_the_limits)


# Each length setting and the column that stores it: PostgreSQL refuses a value past the column's
# width, so a setting wider than its column would turn an accepted write into a server error.
LIMITED_COLUMNS = {"GROVE_MAX_SOURCE_CHARS": "source", "GROVE_MAX_SIGNATURE_CHARS": "signature"}


def widths_hold_the_limits(**kwargs: Any) -> list[checks.CheckMessage]:
    """An error for every length setting wider than the node column it limits."""
    from django.conf import settings

    from memory.models import Node

    errors: list[checks.CheckMessage] = []
    for setting, column in LIMITED_COLUMNS.items():
        field = Node._meta.get_field(column)
        width = getattr(field, "max_length", None) or 0
        if getattr(settings, setting) > width:
            errors.append(
                checks.Error(
                    f"{setting} is {getattr(settings, setting)}, but memory_node.{column} "
                    f"holds at most {width} characters",
                    hint=f"set {setting} to {width} or less",
                    id="memory.E001",
                )
            )
    return errors
