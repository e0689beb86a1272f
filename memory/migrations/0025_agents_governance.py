"""Agents the owner sees and governs: `read` and `recalled` events (an agent's reads and
recalls on the record), the token's governance fields (muted, auto_decline, write_limit) and
its write-rate window, and a (token, at, kind) index: an agent's events by day and kind, counted
from the index alone.

The kinds change the event table's CHECK constraint, which SQLite changes by rebuilding the
table: the triggers and the raw batch index are recreated as 0024 does.
"""

from importlib import import_module

from django.db import migrations, models
from django.db.models import Q

_grants = import_module("memory.migrations.0024_token_grants")

KINDS = [*_grants.KINDS, "read", "recalled"]


class Migration(migrations.Migration):
    dependencies = [("memory", "0024_token_grants")]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="muted",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="auto_decline",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="write_limit",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="write_window_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="write_window_count",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
        migrations.RemoveConstraint(model_name="event", name="memory_event_kind_valid"),
        migrations.AlterField(
            model_name="event",
            name="kind",
            field=models.CharField(
                choices=[(k, k.replace("_", " ").title()) for k in KINDS], max_length=24
            ),
        ),
        migrations.AddConstraint(
            model_name="event",
            constraint=models.CheckConstraint(
                condition=models.Q(kind__in=KINDS), name="memory_event_kind_valid"
            ),
        ),
        migrations.RemoveIndex(model_name="event", name="memory_event_token"),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=Q(token__isnull=False),
                fields=["token", "at", "kind"],
                name="memory_event_token_at",
            ),
        ),
        migrations.RunPython(_grants._rebuilt, migrations.RunPython.noop),
    ]
