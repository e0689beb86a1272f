"""Django's SQLite backend, with one change: test flushes can get past the no-delete triggers.

Grove's triggers forbid deleting nodes, edges and events, so `flush` (which transactional tests
run between tests) fails by design. With GROVE_ALLOW_FLUSH on (tests set it; nothing else
should), a flush drops the triggers, empties the tables and the full-text index, and puts the
triggers back in the same transaction.
"""

from __future__ import annotations

from django.conf import settings
from django.db.backends.sqlite3 import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        statements = super().sql_flush(
            style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
        if not statements or not getattr(settings, "GROVE_ALLOW_FLUSH", False):
            return statements
        with self.connection.cursor() as cursor:
            cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
            triggers = cursor.fetchall()
            cursor.execute("SELECT 1 FROM sqlite_master WHERE name = 'memory_node_fts'")
            has_fts = cursor.fetchone() is not None
        drops = [f'DROP TRIGGER IF EXISTS "{name}";' for name, _ in triggers]
        fts = (
            ["INSERT INTO memory_node_fts(memory_node_fts) VALUES ('delete-all');"]
            if has_fts
            else []
        )
        return drops + statements + fts + [f"{sql};" for _, sql in triggers]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
