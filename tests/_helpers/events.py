"""Audit events written by hand (raw SQL), where a test needs a state without the act that
would lead to it: the ceremonies and decay write these in real life."""

from __future__ import annotations

import json
from datetime import datetime

from django.db import connection
from django.utils import timezone

from memory.models import Node


def mark(node: Node, kind: str, *, at: datetime | None = None) -> None:
    """A raw-SQL fixture for an audit event (the ceremonies and decay write these in real life)."""
    at = at or timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) "
            "VALUES (%s, %s, %s, 'fixture', '', '{}', '{}')",
            [at, kind, node.pk],
        )
        if kind == "decayed":
            cursor.execute("UPDATE memory_node SET decayed_at = %s WHERE id = %s", [at, node.pk])


def authority(node: Node, kind: str) -> None:
    """A ground/proposed event written the way the ceremony would leave it (raw SQL)."""
    detail = {"body_hash": node.body_hash, "adopting_words": "I hold this."}
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail)
               VALUES (%s, %s, %s, 'owner', '', '{}', %s)""",
            [
                connection.ops.adapt_datetimefield_value(timezone.now()),
                kind,
                node.pk,
                json.dumps(detail),
            ],
        )
