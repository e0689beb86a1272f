"""An index on the batch id a bulk act writes into each of its events' detail (memory/batches.py):
undo reads a batch's events by it, and the audit log filters by it (/audit/?batch=...). Partial,
so the many events that belong to no batch cost no index entry. The expression is the one
memory.batches.batch_sql() spells, per engine, so lookups use the index.
"""

from django.db import migrations


def _create(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX memory_event_batch ON memory_event ((detail ->> 'batch')) "
            "WHERE (detail ->> 'batch') IS NOT NULL"
        )
    else:
        schema_editor.execute(
            "CREATE INDEX memory_event_batch ON memory_event (json_extract(detail, '$.batch')) "
            "WHERE json_extract(detail, '$.batch') IS NOT NULL"
        )


def _drop(apps, schema_editor) -> None:
    schema_editor.execute("DROP INDEX IF EXISTS memory_event_batch")


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0022_truncate_guard_test_databases"),
    ]

    operations = [migrations.RunPython(_create, _drop)]
