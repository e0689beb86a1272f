"""A node's source is as wide as GROVE_MAX_SOURCE_CHARS allows (2,000 characters): the column
was 500 wide, so PostgreSQL refused with a 500 what the write path had accepted, and SQLite (whose
column types are not enforced) stored it. memory/apps.py checks at start-up that the setting
never exceeds the column again.

PostgreSQL refuses to change the type of a column a trigger's WHEN names (memory_node_immutable
does), so the triggers on memory_node are read back as they stand (pg_get_triggerdef), dropped,
and made again unchanged around the ALTER: from varchar(500) to varchar(2000) is a widening, no
row is rewritten. SQLite needs nothing: only the state changes, no table is rebuilt, and its
triggers stay.
"""

from django.db import migrations, models

WIDTH = 2000


def _widen(width: int):
    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(
                "SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger "
                "WHERE tgrelid = 'memory_node'::regclass AND NOT tgisinternal"
            )
            triggers = cursor.fetchall()
            for name, _ in triggers:
                cursor.execute(f'DROP TRIGGER "{name}" ON memory_node')
            cursor.execute(
                f"ALTER TABLE memory_node ALTER COLUMN source TYPE varchar({width})"
            )
            for _, definition in triggers:
                cursor.execute(definition)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0020_recalllog_dig"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="node",
                    name="source",
                    field=models.CharField(blank=True, default="", max_length=WIDTH),
                ),
            ],
            database_operations=[migrations.RunPython(_widen(WIDTH), _widen(500))],
        ),
    ]
