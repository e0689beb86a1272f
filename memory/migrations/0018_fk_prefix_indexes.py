"""The foreign keys' own indexes go where a composite index already leads with the column
(docs/DESIGN.md, "Two engines: plans without statistics"): each was a second write per row for
no lookup the composite does not serve.

- memory_edge.from_node_id: the unique (from_node_id, to_node_id, kind);
- memory_edge.to_node_id: memory_edge_to_kind (to_node_id, kind);
- memory_vector.node_id: the unique (node_id, model);
- memory_mention.node_id: the unique (node_id, entity).

Cross-link writes a million similar edges in a first sleep at 1M nodes, and each edge paid for
two extra index entries, one of them at a random place (to_node_id). Indexes by name (the same on
SQLite and PostgreSQL): no table is rebuilt, so SQLite keeps the edges' triggers (Django's
AlterField would remake the table without them).
"""

import django.db.models.deletion
from django.db import migrations, models

# Django's names for the foreign keys' own indexes (0001, 0014): a hash of table and column.
_FK_INDEXES = {
    "memory_edge_from_node_id_bb8e8ef4": ("memory_edge", "from_node_id"),
    "memory_edge_to_node_id_2f8d9abe": ("memory_edge", "to_node_id"),
    "memory_vector_node_id_5dfe739f": ("memory_vector", "node_id"),
    "memory_mention_node_id_273da837": ("memory_mention", "node_id"),
}


def _fk(related_name: str) -> models.ForeignKey:
    return models.ForeignKey(
        db_index=False,
        on_delete=django.db.models.deletion.PROTECT,
        related_name=related_name,
        to="memory.node",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0017_liveness_partial_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(model_name="edge", name="from_node", field=_fk("out_edges")),
                migrations.AlterField(model_name="edge", name="to_node", field=_fk("in_edges")),
                migrations.AlterField(model_name="mention", name="node", field=_fk("mentions")),
                migrations.AlterField(model_name="vector", name="node", field=_fk("vectors")),
            ],
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX IF EXISTS {name}",
                    f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({column})",
                )
                for name, (table, column) in _FK_INDEXES.items()
            ],
        ),
    ]
