"""SQLite's query plans of the statements a piece of code issues, read on the test database
(which, like a store, has no planner statistics)."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext


def plans(run, *contains: str) -> list[str]:
    """EXPLAIN QUERY PLAN of each statement `run` issues that contains every one of `contains`,
    its rows joined by " | "."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'")
        assert cursor.fetchone() is None, "the test database, like a store, has no statistics"
    with CaptureQueriesContext(connection) as queries:
        run()
    found = [q["sql"] for q in queries.captured_queries if all(c in q["sql"] for c in contains)]
    assert found, f"no statement with {contains!r}"
    explained = []
    with connection.cursor() as cursor:
        for sql in found:
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
            explained.append(" | ".join(str(row[-1]) for row in cursor.fetchall()))
    return explained
