from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memory.models import Edge, Event, Node, Vector

# Playwright drives the live server from its own thread.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_configure(config) -> None:
    from django.conf import settings

    # Transactional tests end with a flush, which must get past the no-delete triggers.
    settings.GROVE_ALLOW_FLUSH = True


@pytest.fixture
def root_note(db) -> Node:
    """A journal entry to hang origins on (journal needs an origin too, so it cites a scroll-less
    import node written first)."""
    from memory.write import write_node

    seed = write_node(
        body="Seed import: the owner's notebook.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        origins=[],
        source="notebook.md",
    )
    return seed.node


@pytest.fixture
def make_note(db, root_note) -> Callable[..., Node]:
    """Write a note through the real write path; age it by the store clock if asked."""
    from memory.write import write_node

    def make(body: str, *, days_old: float = 0, **fields) -> Node:
        fields.setdefault("kind", "note")
        fields.setdefault("jurisdiction", "home")
        fields.setdefault("signature", "owner")
        fields.setdefault("origins", [{"id": root_note.pk, "relation": "derived_from"}])
        created_at = timezone.now() - timedelta(days=days_old) if days_old else None
        return write_node(body=body, created_at=created_at, **fields).node

    return make


@pytest.fixture
def counts(db) -> Callable[[], dict[str, int]]:
    """Row counts of everything a write may touch, to prove a refusal stored nothing."""

    def snapshot() -> dict[str, int]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM memory_node_fts_docsize")
            fts = cursor.fetchone()[0]
        return {
            "nodes": Node.objects.count(),
            "edges": Edge.objects.count(),
            "events": Event.objects.count(),
            "vectors": Vector.objects.count(),
            "fts": fts,
        }

    return snapshot
