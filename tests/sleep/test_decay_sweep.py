"""The sweep outside any transaction, as sleep runs it: each batch its own transaction, the
sweep's temporary storage in memory for the sweep only (memory/sleep/decay.py)."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.utils import timezone

from memory.custody.chain_verify import verify
from memory.models import Event, Node
from memory.sleep.decay import decay
from memory.write import write_node


def _temp_store() -> int | None:
    """SQLite's temp_store (0 default, 2 memory); None on PostgreSQL, which has no such thing."""
    if connection.vendor != "sqlite":
        return None
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA temp_store")
        return int(cursor.fetchone()[0])


def _old_page(body: str) -> Node:
    return write_node(
        body=body,
        kind="internet",
        jurisdiction="wild",
        signature="clipper",
        origins=[],
        source="https://example.org/page",
        created_at=timezone.now() - timedelta(days=400),
    ).node


def test_the_sweep_in_its_own_transactions_collects_and_puts_temp_store_back(real_db):
    pages = [_old_page(f"An old page nobody read, number {i}.") for i in range(3)]
    before = _temp_store()
    assert before in (0, None)  # the connection's default
    assert not connection.in_atomic_block

    during: list[int | None] = []
    result = decay(beat=lambda **_: during.append(_temp_store()))

    assert result["count"] == 3
    assert during == [None if before is None else 2]  # MEMORY, between batches
    assert Node.objects.filter(pk__in=[p.pk for p in pages], decayed_at__isnull=False).count() == 3
    assert Event.objects.filter(kind="decayed", reason="unreachable").count() == 3
    assert verify().ok
    assert _temp_store() == before
