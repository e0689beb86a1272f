"""A `drift_accepted` event: the owner keeps a ground node's words although its file changed
(memory/custody/drift.py; DESIGN.md, "Drift").

SQLite changes a CHECK constraint by rebuilding the table, and the rebuild drops the table's
triggers and the raw batch index: both are recreated here as 0024 and 0025 do. PostgreSQL swaps the
constraint in place.
"""

from importlib import import_module

from django.db import migrations, models

_grants = import_module("memory.migrations.0024_token_grants")
_agents = import_module("memory.migrations.0025_agents_governance")

KINDS = [*_agents.KINDS, "drift_accepted"]


class Migration(migrations.Migration):
    dependencies = [("memory", "0025_agents_governance")]

    operations = [
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
        migrations.RunPython(_grants._rebuilt, migrations.RunPython.noop),
    ]
