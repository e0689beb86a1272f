"""A `declined` event: the owner's "not now" to a proposal (DESIGN.md, Ceremonies).

SQLite changes a CHECK constraint by rebuilding the table, and the rebuild drops the table's
triggers: every memory_event trigger as 0005_custody left them is recreated here, word for word
(tests/schema/test_invariants.py and tests/custody/test_raw_sql.py try each with raw SQL).
"""

from importlib import import_module

from django.db import migrations, models


def _event_triggers() -> list[str]:
    custody = import_module("memory.migrations.0005_custody")
    return [sql for sql in custody.TRIGGERS if " ON memory_event" in sql]


def _recreate_event_triggers(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    for sql in _event_triggers():
        schema_editor.execute(sql.replace("CREATE TRIGGER", "CREATE TRIGGER IF NOT EXISTS", 1))


KINDS = [
    "decayed",
    "restored",
    "revived",
    "kept",
    "promoted_permanent",
    "proposed",
    "declined",
    "rooted",
    "superseded",
    "sealed",
    "unsealed",
    "rejected",
    "rearrival_refused",
    "arrived",
    "rearrived",
]


class Migration(migrations.Migration):
    dependencies = [("memory", "0005_custody")]

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
        migrations.RunPython(_recreate_event_triggers, migrations.RunPython.noop),
    ]
