"""Django's PostgreSQL backend (psycopg 3), with one change: test flushes can get past the
no-delete guards.

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


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
