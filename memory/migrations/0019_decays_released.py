"""A `decays_released` event: the owner lets sleep collect the decays its guard on mass
forgetting held back (DESIGN.md, "Decay is reachability").

SQLite changes a CHECK constraint by rebuilding the table, and the rebuild drops the table's
triggers: every memory_event trigger is recreated here as 0006_declined does, from
0005_custody's own text (tests/schema/test_invariants.py and tests/custody/test_raw_sql.py try
each with raw SQL). PostgreSQL swaps the constraint in place.
"""

from importlib import import_module

from django.db import migrations, models

_declined = import_module("memory.migrations.0006_declined")

KINDS = [*_declined.KINDS, "decays_released"]


class Migration(migrations.Migration):
    dependencies = [("memory", "0018_fk_prefix_indexes")]

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
        migrations.RunPython(_declined._recreate_event_triggers, migrations.RunPython.noop),
    ]
