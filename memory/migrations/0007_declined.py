"""A `declined` event: the owner's "not now" to a proposal (DESIGN.md, Ceremonies).

SQLite changes a CHECK constraint by rebuilding the table, and the rebuild drops the table's
triggers; the append-only and rooted-hash triggers of 0002 are recreated here, word for word.
"""

from importlib import import_module

from django.db import migrations, models

_EVENT_TRIGGERS = (
    "memory_event_no_update",
    "memory_event_no_delete",
    "memory_event_rooted_hash_matches",
)


def _recreate_event_triggers(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    invariants = import_module("memory.migrations.0002_invariants")
    for sql in invariants.FORWARD:
        if any(f"TRIGGER {name} " in sql for name in _EVENT_TRIGGERS):
            schema_editor.execute(sql.replace("CREATE TRIGGER", "CREATE TRIGGER IF NOT EXISTS"))


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
]


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_speed_indexes")]

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
