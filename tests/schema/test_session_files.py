"""The session cursor's rules held by the database itself, raw SQL included."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction


def _insert(offset: int, size: int, fmt: str = "codex") -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            'INSERT INTO memory_sessionfile (path, format, domain, size, mtime_ns, "offset", '
            "head_sha256, lines, updated_at) VALUES (%s, %s, 'personal', %s, 0, %s, '', 0, %s)",
            [f"/tmp/{fmt}-{offset}-{size}.jsonl", fmt, size, offset, "2025-01-01T00:00:00Z"],
        )


def test_a_cursor_past_the_end_of_its_file_is_refused_by_raw_sql(db):
    _insert(10, 10)
    with pytest.raises(IntegrityError):
        _insert(11, 10)
    with pytest.raises(IntegrityError):
        _insert(-1, 10)


def test_a_cursor_of_an_unknown_format_is_refused_by_raw_sql(db):
    with pytest.raises(IntegrityError):
        _insert(0, 0, fmt="gemini")
