"""Node.last_read_by: who read it last (an agent's token name, or owner for the owner's keep), so
the node page can say what holds a live node ("read 3 times on 2 days, last by agent:scout").

Added in place with one ALTER TABLE, like 0004 (Django's AddField would rebuild the SQLite table
and drop the invariant triggers). Nodes read before this migration say no name: it is unknown.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0014_entities"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="node",
                    name="last_read_by",
                    field=models.CharField(blank=True, db_default="", default="", max_length=200),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE memory_node ADD COLUMN last_read_by varchar(200) NOT NULL "
                    "DEFAULT ''",
                    "ALTER TABLE memory_node DROP COLUMN last_read_by",
                ),
            ],
        ),
    ]
