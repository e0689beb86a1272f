"""RecallLog.dig: a logged look into the forgotten (memory.recall.dig) beside ordinary recalls,
so the log says which was which, and a token's read of a decayed node can be checked against
what it dug up.

Added in place with one ALTER TABLE, like 0015 (Django's AddField would rebuild the SQLite table
and drop the append-only triggers). Rows logged before this migration were recalls: false.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0019_decays_released"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="recalllog",
                    name="dig",
                    field=models.BooleanField(db_default=False, default=False),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE memory_recalllog ADD COLUMN dig boolean NOT NULL DEFAULT false",
                    "ALTER TABLE memory_recalllog DROP COLUMN dig",
                ),
            ],
        ),
    ]
