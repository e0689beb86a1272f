"""What every integrity module shares: raw SQL rows (the checks must see what is in the file,
whatever the ORM believes), the cap on examples, and the "above marks" condition."""

from __future__ import annotations

from django.db import connection

MAX_EXAMPLES = 20


def rows(sql: str, params: tuple = ()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def changed_since(n: str, marks: dict[str, int] | None) -> tuple[str, tuple]:
    """Above marks: an SQL condition keeping the nodes `n` that are new or have a new event (the
    flags below change only with an event; one changed behind the triggers waits for the
    weekly full run). Without marks: no condition."""
    if not marks:
        return "", ()
    return (
        f"""AND {n}.id IN (SELECT node_id FROM memory_event WHERE id > %s
                           UNION SELECT id FROM memory_node WHERE id > %s)""",
        (marks["event"], marks["node"]),
    )
