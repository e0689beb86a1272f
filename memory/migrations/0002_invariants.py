"""The invariants the database itself holds, so raw SQL cannot break them (DESIGN.md, Data)."""

from django.db import migrations

IMMUTABLE_NODE_COLUMNS = [
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
]


def _changed(column: str) -> str:
    return f"NEW.{column} IS NOT OLD.{column}"


FORWARD = [
    # Nodes: immutable words and clocks.
    f"""
    CREATE TRIGGER memory_node_immutable BEFORE UPDATE ON memory_node
    WHEN {" OR ".join(_changed(c) for c in IMMUTABLE_NODE_COLUMNS)}
    BEGIN SELECT RAISE(ABORT, 'memory_node_immutable: a node''s words, origin and clocks never change'); END
    """,
    # Permanence is one-way.
    """
    CREATE TRIGGER memory_node_permanent_one_way BEFORE UPDATE OF permanent, permanent_at ON memory_node
    WHEN OLD.permanent = 1 AND (NEW.permanent = 0 OR NEW.permanent_at IS NOT OLD.permanent_at)
    BEGIN SELECT RAISE(ABORT, 'memory_node_permanent_one_way: permanent never reverts'); END
    """,
    # A permanent node cannot decay.
    """
    CREATE TRIGGER memory_node_permanent_never_decays BEFORE UPDATE OF decayed_at ON memory_node
    WHEN NEW.permanent = 1 AND NEW.decayed_at IS NOT NULL
    BEGIN SELECT RAISE(ABORT, 'memory_node_permanent_never_decays: a permanent node cannot decay'); END
    """,
    """
    CREATE TRIGGER memory_node_no_delete BEFORE DELETE ON memory_node
    BEGIN SELECT RAISE(ABORT, 'memory_node_no_delete: nodes are flagged, never deleted'); END
    """,
    # Edges: endpoints and kind fixed, never deleted.
    """
    CREATE TRIGGER memory_edge_immutable BEFORE UPDATE ON memory_edge
    WHEN NEW.from_node_id IS NOT OLD.from_node_id OR NEW.to_node_id IS NOT OLD.to_node_id
      OR NEW.kind IS NOT OLD.kind OR NEW.created_at IS NOT OLD.created_at
    BEGIN SELECT RAISE(ABORT, 'memory_edge_immutable: an edge''s endpoints and kind never change'); END
    """,
    """
    CREATE TRIGGER memory_edge_no_delete BEFORE DELETE ON memory_edge
    BEGIN SELECT RAISE(ABORT, 'memory_edge_no_delete: edges are never deleted'); END
    """,
    # Events: append-only.
    """
    CREATE TRIGGER memory_event_no_update BEFORE UPDATE ON memory_event
    BEGIN SELECT RAISE(ABORT, 'memory_event_append_only: events are never updated'); END
    """,
    """
    CREATE TRIGGER memory_event_no_delete BEFORE DELETE ON memory_event
    BEGIN SELECT RAISE(ABORT, 'memory_event_append_only: events are never deleted'); END
    """,
    # A root must carry the exact hash of the stored body and the owner's adopting words.
    """
    CREATE TRIGGER memory_event_rooted_hash_matches BEFORE INSERT ON memory_event
    WHEN NEW.kind = 'rooted' AND (
        json_extract(NEW.detail, '$.body_hash') IS NOT
            (SELECT body_hash FROM memory_node WHERE id = NEW.node_id)
        OR length(trim(coalesce(json_extract(NEW.detail, '$.adopting_words'), ''))) = 0
    )
    BEGIN SELECT RAISE(ABORT, 'memory_event_rooted_hash_matches: a root needs adopting words and the stored body''s hash'); END
    """,
    # Recall logs: append-only.
    """
    CREATE TRIGGER memory_recalllog_no_update BEFORE UPDATE ON memory_recalllog
    BEGIN SELECT RAISE(ABORT, 'memory_recalllog_append_only: recall logs are never updated'); END
    """,
    """
    CREATE TRIGGER memory_recalllog_no_delete BEFORE DELETE ON memory_recalllog
    BEGIN SELECT RAISE(ABORT, 'memory_recalllog_append_only: recall logs are never deleted'); END
    """,
    # Full-text index over bodies, kept in sync by the database. Bodies are immutable and nodes
    # are never deleted, so an insert trigger is all the sync there is to do.
    """
    CREATE VIRTUAL TABLE memory_node_fts USING fts5(
        body, content='memory_node', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE TRIGGER memory_node_fts_insert AFTER INSERT ON memory_node
    BEGIN INSERT INTO memory_node_fts(rowid, body) VALUES (NEW.id, NEW.body); END
    """,
]

BACKWARD = [
    "DROP TRIGGER IF EXISTS memory_event_rooted_hash_matches",
    "DROP TRIGGER IF EXISTS memory_node_fts_insert",
    "DROP TABLE IF EXISTS memory_node_fts",
    "DROP TRIGGER IF EXISTS memory_recalllog_no_delete",
    "DROP TRIGGER IF EXISTS memory_recalllog_no_update",
    "DROP TRIGGER IF EXISTS memory_event_no_delete",
    "DROP TRIGGER IF EXISTS memory_event_no_update",
    "DROP TRIGGER IF EXISTS memory_edge_no_delete",
    "DROP TRIGGER IF EXISTS memory_edge_immutable",
    "DROP TRIGGER IF EXISTS memory_node_no_delete",
    "DROP TRIGGER IF EXISTS memory_node_permanent_never_decays",
    "DROP TRIGGER IF EXISTS memory_node_permanent_one_way",
    "DROP TRIGGER IF EXISTS memory_node_immutable",
]


def _sqlite(statements: list[str]):
    """This SQL is SQLite's; on PostgreSQL migration 0013 creates the same invariants."""

    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor != "sqlite":
            return
        with schema_editor.connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]

    operations = [migrations.RunPython(_sqlite(FORWARD), _sqlite(BACKWARD))]
