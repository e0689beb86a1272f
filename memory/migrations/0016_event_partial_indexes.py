"""The audit log's indexes, cheaper to write (docs/bench/sleep.md, the decay step): sleep's decay step
appends one event per node it collects, tens of thousands a night, and each index is a write.

- The index on node_id alone goes: (node_id, kind), memory_event_node_kind, serves every lookup
  by node.
- related_node_id and token_id are indexed only where set: sleep's, importers' and the owner's
  events carry neither, and every NULL entry was still written. A lookup by either (= or IN)
  implies NOT NULL, so both engines use the partial indexes for it.

Indexes by name (the same on SQLite and PostgreSQL): no table is rebuilt, so SQLite keeps the
log's triggers (Django's AlterField would remake the table without them).

On SQLite, the two node triggers the decay sweep's UPDATE of decayed_at met get cheaper, with
the same condition and message (PostgreSQL's twins, 0013, are unchanged):
- memory_node_immutable becomes BEFORE UPDATE OF its columns (the list 0005 gave it): an UPDATE
  that sets none of them cannot change them, so the sweep no longer runs its 15 comparisons a
  row; any UPDATE naming one of them (ON CONFLICT DO UPDATE included) still meets it.
- memory_node_permanent_never_decays becomes AFTER UPDATE OF decayed_at: RAISE(ABORT) undoes
  the whole statement from either side, and an UPDATE with no BEFORE trigger left to run does
  not reload and re-seek each row after it (~2,800 instructions a row, callgrind).
"""

from importlib import import_module

import django.db.models.deletion
from django.db import migrations, models

# Django's names for the foreign keys' own indexes (0001, 0005): a hash of table and column.
_FK_INDEXES = {
    "memory_event_node_id_5d735367": "node_id",
    "memory_event_related_node_id_32c358c8": "related_node_id",
    "memory_event_token_id_b755cba1": "token_id",
}


def _immutable(*, update_of: bool) -> str:
    custody = import_module("memory.migrations.0005_custody")
    (sql,) = [t for t in custody.TRIGGERS if "TRIGGER memory_node_immutable" in t]
    if not update_of:
        return sql
    columns = ", ".join(custody.IMMUTABLE_NODE_COLUMNS)
    of = sql.replace("BEFORE UPDATE ON memory_node", f"BEFORE UPDATE OF {columns} ON memory_node")
    assert of != sql
    return of


def _never_decays(*, after: bool) -> str:
    invariants = import_module("memory.migrations.0002_invariants")
    (sql,) = [t for t in invariants.FORWARD if "TRIGGER memory_node_permanent_never_decays" in t]
    if not after:
        return sql
    moved = sql.replace("BEFORE UPDATE OF decayed_at", "AFTER UPDATE OF decayed_at")
    assert moved != sql
    return moved


def _swap_node_triggers(new: bool):
    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor != "sqlite":
            return
        for name in ("memory_node_immutable", "memory_node_permanent_never_decays"):
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")
        schema_editor.execute(_immutable(update_of=new))
        schema_editor.execute(_never_decays(after=new))

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0015_last_read_by"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="event",
                    name="node",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="events",
                        to="memory.node",
                    ),
                ),
                migrations.AlterField(
                    model_name="event",
                    name="related_node",
                    field=models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="related_events",
                        to="memory.node",
                    ),
                ),
                migrations.AlterField(
                    model_name="event",
                    name="token",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="memory.apitoken",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX IF EXISTS {name}",
                    f"CREATE INDEX IF NOT EXISTS {name} ON memory_event ({column})",
                )
                for name, column in _FK_INDEXES.items()
            ],
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(("related_node__isnull", False)),
                fields=["related_node"],
                name="memory_event_related",
            ),
        ),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(
                condition=models.Q(("token__isnull", False)),
                fields=["token"],
                name="memory_event_token",
            ),
        ),
        migrations.RunPython(_swap_node_triggers(True), _swap_node_triggers(False)),
    ]
