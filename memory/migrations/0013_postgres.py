"""PostgreSQL: the invariants migrations 0002 and 0005 hold on SQLite, as PL/pgSQL triggers, and
the full-text index (a generated tsvector with a GIN index). Nothing happens on SQLite.

Twins, by SQLite trigger:
- memory_node_immutable, memory_edge_immutable -> BEFORE UPDATE row triggers with the same
  column lists (IS DISTINCT FROM is SQLite's IS NOT);
- memory_node_permanent_one_way, memory_node_permanent_never_decays -> the same, on every UPDATE;
- *_no_delete, *_no_update (nodes, edges, events, recall logs, chain checkpoints) -> BEFORE
  DELETE / UPDATE row triggers, plus BEFORE TRUNCATE statement triggers (TRUNCATE fires no row
  trigger; a test flush gets past them with SET LOCAL grove.allow_flush, see grove/postgresql);
- memory_event_rooted_hash_matches -> a BEFORE INSERT trigger reading detail (jsonb);
- *_no_replace, memory_edge_no_replace_pair, memory_event_no_second_verdict: PostgreSQL has no
  REPLACE; a plain INSERT of an existing id or (from, to, kind) fails on the primary key or the
  unique constraint, a second rooted/superseded on the partial unique indexes the models declare
  (memory_event_one_rooted, memory_event_one_superseded), and INSERT ... ON CONFLICT DO UPDATE
  is an UPDATE, so it meets the update triggers above (tests/schema/test_postgres.py tries each).
- the chain: events are never updated, so a chain_hash is written once, at insert.
Errors use SQLSTATE 23000 (integrity_constraint_violation): Django raises IntegrityError on both
engines, and the message starts with the SQLite trigger's name.
"""

from django.db import migrations

NODE_IMMUTABLE = [
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
EDGE_IMMUTABLE = ["id", "from_node_id", "to_node_id", "kind", "created_at", "created_by"]
# Tables whose rows are never deleted (nor truncated), and those never updated either.
NO_DELETE = [
    "memory_node",
    "memory_edge",
    "memory_event",
    "memory_recalllog",
    "memory_chaincheckpoint",
]
NO_UPDATE = ["memory_event", "memory_recalllog", "memory_chaincheckpoint"]
# The SQLite triggers' messages, so a refusal reads the same on both engines.
DELETE_MESSAGE = {
    "memory_node": "memory_node_no_delete: nodes are flagged, never deleted",
    "memory_edge": "memory_edge_no_delete: edges are never deleted",
    "memory_event": "memory_event_append_only: events are never deleted",
    "memory_recalllog": "memory_recalllog_append_only: recall logs are never deleted",
    "memory_chaincheckpoint": ("memory_chaincheckpoint_append_only: checkpoints are never deleted"),
}
UPDATE_MESSAGE = {
    "memory_event": "memory_event_append_only: events are never updated",
    "memory_recalllog": "memory_recalllog_append_only: recall logs are never updated",
    "memory_chaincheckpoint": ("memory_chaincheckpoint_append_only: checkpoints are never changed"),
}


def _changed(columns: list[str]) -> str:
    return " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in columns)


def _refuse(name: str, table: str, when: str, message: str, event: str = "UPDATE") -> str:
    """A row trigger refusing with `message` (which starts with the SQLite trigger's name)."""
    when_sql = f"WHEN ({when})" if when else ""
    text = message.replace("'", "''")
    return (
        f"CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW {when_sql} "
        f"EXECUTE FUNCTION grove_refuse('{text}')"
    )


FUNCTIONS = [
    # One refusal for every row guard: the message is the trigger's argument.
    """
    CREATE OR REPLACE FUNCTION grove_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'integrity_constraint_violation';
    END $$
    """,
    # TRUNCATE empties a table without row triggers; only a test flush may (grove/postgresql).
    """
    CREATE OR REPLACE FUNCTION grove_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF coalesce(current_setting('grove.allow_flush', true), '') = 'on' THEN
            RETURN NULL;
        END IF;
        RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'integrity_constraint_violation';
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION grove_edge_once() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF EXISTS (SELECT 1 FROM memory_edge WHERE from_node_id = NEW.from_node_id
                   AND to_node_id = NEW.to_node_id AND kind = NEW.kind) THEN
            RAISE EXCEPTION 'memory_edge_no_replace: an edge (from, to, kind) exists once and '
                            'is never replaced' USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION grove_one_verdict() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF EXISTS (SELECT 1 FROM memory_event WHERE node_id = NEW.node_id AND kind = NEW.kind) THEN
            RAISE EXCEPTION 'memory_event_no_second_verdict: one rooted and one superseded '
                            'event per node' USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION grove_rooted_hash_matches() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF (NEW.detail ->> 'body_hash') IS DISTINCT FROM
               (SELECT body_hash FROM memory_node WHERE id = NEW.node_id)
           OR length(trim(coalesce(NEW.detail ->> 'adopting_words', ''))) = 0 THEN
            RAISE EXCEPTION 'memory_event_rooted_hash_matches: a root needs adopting words and '
                            'the stored body''s hash'
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$
    """,
]

TRIGGERS = [
    _refuse(
        "memory_node_immutable",
        "memory_node",
        _changed(NODE_IMMUTABLE),
        "memory_node_immutable: a node's words, origin and clocks never change",
    ),
    _refuse(
        "memory_node_permanent_one_way",
        "memory_node",
        "OLD.permanent AND (NOT NEW.permanent OR NEW.permanent_at IS DISTINCT FROM "
        "OLD.permanent_at)",
        "memory_node_permanent_one_way: permanent never reverts",
    ),
    _refuse(
        "memory_node_permanent_never_decays",
        "memory_node",
        "NEW.permanent AND NEW.decayed_at IS NOT NULL",
        "memory_node_permanent_never_decays: a permanent node cannot decay",
    ),
    _refuse(
        "memory_edge_immutable",
        "memory_edge",
        _changed(EDGE_IMMUTABLE),
        "memory_edge_immutable: an edge's endpoints and kind never change",
    ),
    *[_refuse(f"{t}_no_delete", t, "", DELETE_MESSAGE[t], event="DELETE") for t in NO_DELETE],
    *[_refuse(f"{t}_no_update", t, "", UPDATE_MESSAGE[t]) for t in NO_UPDATE],
    # Twins of SQLite's BEFORE INSERT guards, for the same refusal and message (the unique
    # constraint and the partial unique indexes would refuse these too, by their own names).
    """
    CREATE TRIGGER memory_edge_no_replace_pair BEFORE INSERT ON memory_edge
    FOR EACH ROW EXECUTE FUNCTION grove_edge_once()
    """,
    """
    CREATE TRIGGER memory_event_no_second_verdict BEFORE INSERT ON memory_event
    FOR EACH ROW WHEN (NEW.kind IN ('rooted', 'superseded')) EXECUTE FUNCTION grove_one_verdict()
    """,
    *[
        f"CREATE TRIGGER {t}_no_truncate BEFORE TRUNCATE ON {t} FOR EACH STATEMENT "
        f"EXECUTE FUNCTION grove_refuse_truncate('{t}_no_truncate: rows are never deleted')"
        for t in NO_DELETE
    ],
    """
    CREATE TRIGGER memory_event_rooted_hash_matches BEFORE INSERT ON memory_event
    FOR EACH ROW WHEN (NEW.kind = 'rooted') EXECUTE FUNCTION grove_rooted_hash_matches()
    """,
]

# Full-text search (memory/recall/fts_pg.py): English stemming like FTS5's porter tokenizer; a
# generated column, so the index follows the (immutable) body with no trigger to keep.
FULL_TEXT = [
    """
    ALTER TABLE memory_node ADD COLUMN body_tsv tsvector
        GENERATED ALWAYS AS (to_tsvector('english', body)) STORED
    """,
    "CREATE INDEX memory_node_body_tsv ON memory_node USING gin (body_tsv)",
]

TRIGGER_NAMES = [
    ("memory_node_immutable", "memory_node"),
    ("memory_node_permanent_one_way", "memory_node"),
    ("memory_node_permanent_never_decays", "memory_node"),
    ("memory_edge_immutable", "memory_edge"),
    ("memory_event_rooted_hash_matches", "memory_event"),
    ("memory_edge_no_replace_pair", "memory_edge"),
    ("memory_event_no_second_verdict", "memory_event"),
    *[(f"{t}_no_delete", t) for t in NO_DELETE],
    *[(f"{t}_no_update", t) for t in NO_UPDATE],
    *[(f"{t}_no_truncate", t) for t in NO_DELETE],
]

BACKWARD = [
    *[f"DROP TRIGGER IF EXISTS {name} ON {table}" for name, table in TRIGGER_NAMES],
    "DROP INDEX IF EXISTS memory_node_body_tsv",
    "ALTER TABLE memory_node DROP COLUMN IF EXISTS body_tsv",
    "DROP FUNCTION IF EXISTS grove_rooted_hash_matches()",
    "DROP FUNCTION IF EXISTS grove_one_verdict()",
    "DROP FUNCTION IF EXISTS grove_edge_once()",
    "DROP FUNCTION IF EXISTS grove_refuse_truncate()",
    "DROP FUNCTION IF EXISTS grove_refuse()",
]


def _postgresql(statements: list[str]):
    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)

    return run


def _trigram(apps, schema_editor) -> None:
    """Scripts without spaces: a trigram index on bodies when pg_trgm can be had (a trusted
    extension since PostgreSQL 13, so the database owner may create it). Without it, substring
    search falls back to a sequential scan (memory/recall/fts_pg.py), slower but the same answers."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")
        if cursor.fetchone() is None:
            return
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        cursor.execute(
            "CREATE INDEX IF NOT EXISTS memory_node_body_trgm ON memory_node "
            "USING gin (body gin_trgm_ops)"
        )


class Migration(migrations.Migration):
    # After every table change (SQLite-style rebuilds elsewhere would not touch these, but the
    # checkpoint table must exist): the lead re-chains it after the last migration at merge.
    dependencies = [("memory", "0008_trigram")]

    operations = [
        migrations.RunPython(
            _postgresql([*FUNCTIONS, *TRIGGERS, *FULL_TEXT]), _postgresql(BACKWARD)
        ),
        migrations.RunPython(_trigram, _postgresql(["DROP INDEX IF EXISTS memory_node_body_trgm"])),
    ]
