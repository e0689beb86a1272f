# Mentions: the entities (names, dates, quantities) a node names, written by sleep (memory/recall/entities.py).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0013_postgres"),
    ]

    operations = [
        migrations.CreateModel(
            name="Mention",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("entity", models.CharField(max_length=100)),
                (
                    "kind",
                    models.CharField(
                        choices=[("name", "Name"), ("date", "Date"), ("quantity", "Quantity")],
                        max_length=16,
                    ),
                ),
                (
                    "node",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="mentions",
                        to="memory.node",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["entity", "node"], name="memory_mention_entity_node")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("node", "entity"), name="memory_mention_unique_node_entity"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("kind__in", ["name", "date", "quantity"])),
                        name="memory_mention_kind_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("entity", ""), _negated=True),
                        name="memory_mention_entity_not_empty",
                    ),
                ],
            },
        ),
    ]
