"""Django's PostgreSQL backend (psycopg 3), with two changes: every transaction holds Grove's
write lock, as on SQLite, and test flushes can get past the no-delete guards.

The write lock. Grove's SQLite transactions are BEGIN IMMEDIATE: one writer at a time, and what
a transaction reads it may act on (a ceremony's re-check, the write path's duplicate lookup, a
cite's existence check, sleep's re-checks before a decay, the chain's tail) with no one writing
in between. On PostgreSQL each transaction (Django's outermost atomic) starts by taking one
transaction-level advisory lock, so the same code keeps the same guarantee: two racing ceremonies
give one winner, two writers of the same words one node. Readers outside a transaction (pages,
recall's queries) never wait; writers queue, as they do on SQLite; every write appends to the
one hash chain anyway, so writes are a sequence whatever the engine.

PostgreSQL's flush is TRUNCATE, which fires no row triggers; migration 0013 therefore refuses
TRUNCATE on the record's tables with statement triggers, unless the transaction has set
grove.allow_flush. With GROVE_ALLOW_FLUSH on (tests set it; nothing else should), a flush sets it
for its own transaction only (SET LOCAL), the twin of grove/sqlite dropping and restoring its
triggers around the flush.
"""

from __future__ import annotations

from django.conf import settings
from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        statements = super().sql_flush(
            style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
        if not statements or not getattr(settings, "GROVE_ALLOW_FLUSH", False):
            return statements
        return ["SET LOCAL grove.allow_flush = 'on';", *statements]


# The key of Grove's write lock ("grove-w"); the chain's tail (memory/chain.py) is read under it.
WRITE_LOCK = 0x67726F76652D77


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def _set_autocommit(self, autocommit: bool) -> None:
        super()._set_autocommit(autocommit)
        if not autocommit:
            # The first statement of the transaction: held until it commits or rolls back.
            with self.connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK])
