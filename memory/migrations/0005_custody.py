"""Custody: tokens on nodes and events, the hash chain, and triggers that hold against
every statement form.

REPLACE (INSERT OR REPLACE, REPLACE INTO) deletes the conflicting row without firing DELETE
triggers unless PRAGMA recursive_triggers is on, and a pragma holds only on the connections that
set it, not on the sqlite3 shell of someone holding the file. So the guards are BEFORE INSERT
triggers that refuse an insert colliding with an existing row: an existing id on nodes, edges,
events and recall logs (REPLACE, UPSERT and plain INSERT alike), a second rooted or superseded
event for a node. An edge whose (from, to, kind) exists is ignored (RAISE(IGNORE)), so REPLACE
cannot rewrite it while sleep's INSERT OR IGNORE keeps working. The id joins the immutable
columns, and a node's token is immutable like its words.

Existing rows: content keys are recomputed without format characters (Cf), every node without
an arrival event gets one (at its created_at, reason backfill), and the chain is computed over
every event in id order. The SQL is SQLite's; PostgreSQL needs its own twins.
"""

import hashlib
import re
import unicodedata

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

IMMUTABLE_NODE_COLUMNS = [
    "id",
    "body",
    "body_hash",
    "content_key",
    "jurisdiction",
    "kind",
    "domain",
    "signature",
    "source",
    "created_at",
    "referent_time",
    "scroll_path",
    "scroll_offset",
    "scroll_hash",
    "token_id",
]


def _changed(columns: list[str]) -> str:
    return " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in columns)


def _no_existing_id(table: str) -> str:
    return f"""
    CREATE TRIGGER {table}_no_replace BEFORE INSERT ON {table}
    WHEN EXISTS (SELECT 1 FROM {table} WHERE id = NEW.id)
    BEGIN SELECT RAISE(ABORT, '{table}_no_replace: an existing row is never replaced'); END
    """


# Dropped before the schema changes: the ones replaced below, and memory_event's (rebuilding the
# table for its new kinds drops them anyway; the backfill then writes the chain column).
DROP_FIRST = [
    "DROP TRIGGER IF EXISTS memory_node_immutable",
    "DROP TRIGGER IF EXISTS memory_edge_immutable",
    "DROP TRIGGER IF EXISTS memory_event_no_update",
    "DROP TRIGGER IF EXISTS memory_event_no_delete",
    "DROP TRIGGER IF EXISTS memory_event_rooted_hash_matches",
]

TRIGGERS = [
    f"""
    CREATE TRIGGER memory_node_immutable BEFORE UPDATE ON memory_node
    WHEN {_changed(IMMUTABLE_NODE_COLUMNS)}
    BEGIN SELECT RAISE(ABORT, 'memory_node_immutable: a node''s words, origin and clocks never change'); END
    """,
    """
    CREATE TRIGGER memory_edge_immutable BEFORE UPDATE ON memory_edge
    WHEN NEW.id IS NOT OLD.id OR NEW.from_node_id IS NOT OLD.from_node_id
      OR NEW.to_node_id IS NOT OLD.to_node_id OR NEW.kind IS NOT OLD.kind
      OR NEW.created_at IS NOT OLD.created_at OR NEW.created_by IS NOT OLD.created_by
    BEGIN SELECT RAISE(ABORT, 'memory_edge_immutable: an edge''s endpoints and kind never change'); END
    """,
    """
    CREATE TRIGGER memory_event_no_update BEFORE UPDATE ON memory_event
    BEGIN SELECT RAISE(ABORT, 'memory_event_append_only: events are never updated'); END
    """,
    """
    CREATE TRIGGER memory_event_no_delete BEFORE DELETE ON memory_event
    BEGIN SELECT RAISE(ABORT, 'memory_event_append_only: events are never deleted'); END
    """,
    """
    CREATE TRIGGER memory_event_rooted_hash_matches BEFORE INSERT ON memory_event
    WHEN NEW.kind = 'rooted' AND (
        json_extract(NEW.detail, '$.body_hash') IS NOT
            (SELECT body_hash FROM memory_node WHERE id = NEW.node_id)
        OR length(trim(coalesce(json_extract(NEW.detail, '$.adopting_words'), ''))) = 0
    )
    BEGIN SELECT RAISE(ABORT, 'memory_event_rooted_hash_matches: a root needs adopting words and the stored body''s hash'); END
    """,
    _no_existing_id("memory_node"),
    _no_existing_id("memory_edge"),
    _no_existing_id("memory_event"),
    _no_existing_id("memory_recalllog"),
    """
    CREATE TRIGGER memory_edge_no_replace_pair BEFORE INSERT ON memory_edge
    WHEN EXISTS (SELECT 1 FROM memory_edge WHERE from_node_id = NEW.from_node_id
                 AND to_node_id = NEW.to_node_id AND kind = NEW.kind)
    BEGIN SELECT RAISE(ABORT, 'memory_edge_no_replace: an edge (from, to, kind) exists once and is never replaced'); END
    """,
    """
    CREATE TRIGGER memory_chaincheckpoint_no_update BEFORE UPDATE ON memory_chaincheckpoint
    BEGIN SELECT RAISE(ABORT, 'memory_chaincheckpoint_append_only: checkpoints are never changed'); END
    """,
    """
    CREATE TRIGGER memory_chaincheckpoint_no_delete BEFORE DELETE ON memory_chaincheckpoint
    BEGIN SELECT RAISE(ABORT, 'memory_chaincheckpoint_append_only: checkpoints are never deleted'); END
    """,
    """
    CREATE TRIGGER memory_event_no_second_verdict BEFORE INSERT ON memory_event
    WHEN NEW.kind IN ('rooted', 'superseded') AND EXISTS (
        SELECT 1 FROM memory_event WHERE node_id = NEW.node_id AND kind = NEW.kind)
    BEGIN SELECT RAISE(ABORT, 'memory_event_no_second_verdict: one rooted and one superseded event per node'); END
    """,
]

NEW_TRIGGERS = [
    "memory_node_no_replace",
    "memory_edge_no_replace",
    "memory_event_no_replace",
    "memory_recalllog_no_replace",
    "memory_edge_no_replace_pair",
    "memory_event_no_second_verdict",
    "memory_chaincheckpoint_no_update",
    "memory_chaincheckpoint_no_delete",
]


def _sqlite(statements: list[str]):
    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor != "sqlite":
            return
        with schema_editor.connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)

    return run


# Frozen copies of the key and snapshot of this time (the live code may change; this may not).
_WS = re.compile(r"\s+")
_SNAPSHOT_FIELDS = (
    "body_hash", "kind", "jurisdiction", "domain", "signature", "source", "access_count",
    "last_accessed_at", "permanent", "permanent_at", "decayed_at", "created_at", "referent_time",
)  # fmt: skip


def _content_key(body: str) -> str:
    visible = "".join(
        ch for ch in unicodedata.normalize("NFKC", body) if unicodedata.category(ch) != "Cf"
    )
    folded = _WS.sub(" ", visible.casefold()).strip()
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()


def _snapshot(node) -> dict:
    row = {f: getattr(node, f) for f in _SNAPSHOT_FIELDS}
    row = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
    return {**row, "excerpt": node.body[:280], "body_chars": len(node.body)}


def backfill(apps, schema_editor) -> None:
    """Keys without Cf, an arrival per node, the chain over every event. On SQLite the triggers
    in the way were dropped above; on PostgreSQL (whose twins of 0002 refuse these updates)
    user triggers are disabled for the backfill alone."""
    pg = schema_editor.connection.vendor == "postgresql"
    if pg:
        with schema_editor.connection.cursor() as cursor:
            for table in ("memory_node", "memory_event"):
                cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
    _backfill(apps, schema_editor)
    if pg:
        with schema_editor.connection.cursor() as cursor:
            for table in ("memory_node", "memory_event"):
                cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


def _backfill(apps, schema_editor) -> None:
    from memory.chain import GENESIS, digest_of_row, event_rows

    Node = apps.get_model("memory", "Node")
    Event = apps.get_model("memory", "Event")
    arrived = set(Event.objects.filter(kind="arrived").values_list("node_id", flat=True))
    pending = []
    for node in Node.objects.order_by("id").iterator(chunk_size=2000):
        key = _content_key(node.body)
        if key != node.content_key:
            Node.objects.filter(pk=node.pk).update(content_key=key)
            node.content_key = key
        if node.pk in arrived:
            continue
        pending.append(
            Event(
                at=node.created_at,
                kind="arrived",
                node_id=node.pk,
                actor=node.signature,
                reason="backfill",
                snapshot=_snapshot(node),
                detail={"body_hash": node.body_hash, "content_key": node.content_key},
            )
        )
        if len(pending) >= 2000:
            Event.objects.bulk_create(pending)
            pending = []
    Event.objects.bulk_create(pending)
    # The chain, in id order, computed exactly as verification recomputes it (from raw rows).
    prev, updates = GENESIS, []
    with schema_editor.connection.cursor() as cursor:
        for row in event_rows(0):
            prev = digest_of_row(row, prev)
            if row[-1] != prev:
                updates.append((prev, row[0]))
            if len(updates) >= 5000:
                cursor.executemany("UPDATE memory_event SET chain_hash = %s WHERE id = %s", updates)
                updates = []
        if updates:
            cursor.executemany("UPDATE memory_event SET chain_hash = %s WHERE id = %s", updates)


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0004_read_days'),
    ]

    operations = [
        migrations.RunPython(_sqlite(DROP_FIRST), migrations.RunPython.noop),
        migrations.CreateModel(
            name='ChainCheckpoint',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('event_id', models.BigIntegerField()),
                ('chain_hash', models.CharField(max_length=64)),
                ('verified_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('full', models.BooleanField(default=False)),
            ],
            options={
                'ordering': ['-id'],
            },
        ),
        migrations.RemoveConstraint(
            model_name='event',
            name='memory_event_kind_valid',
        ),
        migrations.AddField(
            model_name='event',
            name='chain_hash',
            field=models.CharField(blank=True, max_length=64, null=True),
        ),
        migrations.AddField(
            model_name='event',
            name='token',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.apitoken'),
        ),
        migrations.AddField(
            model_name='node',
            name='token',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.apitoken'),
        ),
        migrations.AlterField(
            model_name='event',
            name='kind',
            field=models.CharField(choices=[('decayed', 'Decayed'), ('restored', 'Restored'), ('revived', 'Revived'), ('kept', 'Kept'), ('promoted_permanent', 'Promoted Permanent'), ('proposed', 'Proposed'), ('rooted', 'Rooted'), ('superseded', 'Superseded'), ('sealed', 'Sealed'), ('unsealed', 'Unsealed'), ('rejected', 'Rejected'), ('rearrival_refused', 'Rearrival Refused'), ('arrived', 'Arrived'), ('rearrived', 'Rearrived')], max_length=24),
        ),
        migrations.AddConstraint(
            model_name='event',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['decayed', 'restored', 'revived', 'kept', 'promoted_permanent', 'proposed', 'rooted', 'superseded', 'sealed', 'unsealed', 'rejected', 'rearrival_refused', 'arrived', 'rearrived'])), name='memory_event_kind_valid'),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.RunPython(
            _sqlite(TRIGGERS), _sqlite([f"DROP TRIGGER IF EXISTS {n}" for n in NEW_TRIGGERS])
        ),
    ]
