"""The admin shows the memory read-only: it is a window, never a way around the write path."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from memory.models import ApiToken, Edge, Event, Node, RecallLog, SleepRun, Ticket, Vector

if TYPE_CHECKING:  # ModelAdmin is generic in its stub only (no __class_getitem__ at run time)
    _ModelAdmin = admin.ModelAdmin[Model]
else:
    _ModelAdmin = admin.ModelAdmin


class ReadOnlyAdmin(_ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(Node)
class NodeAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "jurisdiction", "domain", "signature", "created_at", "decayed_at")
    list_filter = ("kind", "jurisdiction", "domain", "permanent")
    search_fields = ("id", "source", "signature")
    # No words here: a sealed body must not show through the admin (the dashboard's node page
    # applies the seal; the admin knows nothing of trust).
    exclude = ("body",)


@admin.register(Edge)
class EdgeAdmin(ReadOnlyAdmin):
    list_display = ("id", "from_node_id", "kind", "to_node_id", "created_by", "created_at")
    list_filter = ("kind",)


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("id", "at", "kind", "node_id", "actor", "reason")
    list_filter = ("kind", "reason")
    # Snapshots carry an excerpt of the body, and a sealed node's excerpt is hidden everywhere.
    exclude = ("snapshot",)


for model in (Vector, RecallLog, SleepRun, ApiToken, Ticket):
    admin.site.register(model, ReadOnlyAdmin)
