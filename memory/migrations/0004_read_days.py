"""Node.read_days: distinct days with a read, so permanence needs reads on three days, not in one burst.

The column is added in place with one ALTER TABLE (the same text on SQLite and PostgreSQL):
Django's own AddField would rebuild the SQLite table for the CHECK, dropping 0002's invariant
triggers. Nodes read before this migration count one day: their past days are unknown, and the
conservative guess never promotes early.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0003_speed_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="node",
                    name="read_days",
                    field=models.PositiveIntegerField(db_default=0, default=0),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE memory_node ADD COLUMN read_days integer NOT NULL DEFAULT 0 "
                    "CHECK (read_days >= 0)",
                    "ALTER TABLE memory_node DROP COLUMN read_days",
                ),
            ],
        ),
        migrations.RunSQL(
            "UPDATE memory_node SET read_days = 1 WHERE access_count > 0",
            migrations.RunSQL.noop,
        ),
    ]
