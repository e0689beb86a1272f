from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory.errors import Conflict
from memory.forgetting import let_go
from memory.models import Event, Node
from memory.read import read
from memory.sleep.consolidate import consolidate
from memory.sleep.crosslink import crosslink
from memory.sleep.decay import decay
from memory.sleep.promote import promote, promotion_threshold
from tests._helpers.vectors import place


def reads(node: Node, count: int) -> None:
    """`count` reads, each on a day of its own."""
    Node.objects.filter(pk=node.pk).update(access_count=count, read_days=count)


def test_a_burst_of_reads_on_one_day_does_not_make_a_node_permanent(make_note):
    node = make_note("Read six times within a minute.")
    for _ in range(6):
        read(node.pk, actor="agent:scout")
    node.refresh_from_db()
    assert node.access_count == 6 and node.read_days == 1
    assert promote()["count"] == 0


def test_reads_on_three_days_make_a_node_permanent(make_note):
    node = make_note("Read on three days.")
    start = timezone.now()
    for day in range(3):
        with time_machine.travel(start + timedelta(days=day, hours=1)):
            read(node.pk, actor="agent:scout")
            read(node.pk, actor="agent:scout")
    node.refresh_from_db()
    assert node.read_days == 3
    assert promote()["count"] == 1


def test_the_threshold_is_three_when_nothing_is_read(db):
    assert promotion_threshold() == 3


def test_the_threshold_is_the_95th_percentile_of_read_nodes(make_note):
    for i in range(1, 21):
        reads(make_note(f"Read on {i} days."), i)
    make_note("Never read.")
    assert promotion_threshold() == 19  # nearest rank: ceil(0.95 * 20) = 19th of 1..20


def test_it_promotes_at_the_threshold_with_an_event(make_note):
    hot, warm = make_note("Read a lot."), make_note("Read twice.")
    reads(hot, 3), reads(warm, 2)
    assert promote()["count"] == 1
    hot.refresh_from_db(), warm.refresh_from_db()
    assert hot.permanent and hot.permanent_at is not None and not warm.permanent
    event = Event.objects.get(node=hot, kind="promoted_permanent")
    assert event.detail == {"threshold": 3} and event.snapshot["permanent"] is True
    assert (event.actor, event.reason) == ("sleep", "reads")
    assert promote()["count"] == 0  # idempotent


def test_it_never_promotes_a_decayed_node(make_note):
    node = make_note("Read, then let go.")
    reads(node, 5)
    let_go(node.pk, actor="owner")
    assert promote()["count"] == 0


def test_a_dry_run_promotes_nothing(make_note, counts):
    reads(make_note("Read a lot."), 5)
    before = counts()
    assert promote(dry_run=True) == {"count": 1, "threshold": 5}  # the only read node
    assert counts() == before


def test_permanence_never_reverts_even_when_decay_or_consolidation_would_touch_it(
    make_note, root_note
):
    old = make_note(
        "Old, read, promoted.",
        days_old=400,
        kind="internet",
        jurisdiction="wild",
        origins=[],
        source="https://example.org",
    )
    twin = make_note(
        "Old, read, promoted!",
        days_old=10,
        kind="internet",
        jurisdiction="wild",
        origins=[],
        source="https://example.org",
    )
    reads(old, 3)
    promote()
    # Every other reason to go holds: unread now, old, alone, and a fresher near-twin that
    # reads more. None of it touches a permanent node.
    Node.objects.filter(pk=old.pk).update(access_count=0)
    reads(twin, 50)
    place(root_note, 180), place(old, 0), place(twin, 1)
    crosslink(), consolidate(), decay()
    with pytest.raises(Conflict, match="permanent"):
        let_go(old.pk, actor="owner")
    # A savepoint: on PostgreSQL a refused statement aborts its transaction up to one.
    with (
        pytest.raises(IntegrityError, match="never reverts"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE memory_node SET permanent = FALSE WHERE id = %s", [old.pk])
    old.refresh_from_db()
    assert old.permanent and old.decayed_at is None
    assert Node.objects.get(pk=twin.pk).decayed_at is not None  # the twin lost, not it
    assert timezone.now() > old.permanent_at


def test_read_days_cannot_go_negative_even_by_raw_sql(make_note):
    node = make_note("Counted.")
    # SQLite says "CHECK constraint failed", PostgreSQL "violates check constraint".
    with (
        pytest.raises(IntegrityError, match=r"(?i)check constraint"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE memory_node SET read_days = -1 WHERE id = %s", [node.pk])


def test_reads_on_days_below_the_threshold_do_not_make_a_node_permanent(make_note):
    for i in range(1, 21):
        reads(make_note(f"Read on {i} days."), i)
    assert promotion_threshold() == 19
    short = make_note("Read on eighteen days.")
    reads(short, 18)
    result = promote()
    assert result == {"count": 2, "threshold": 19}  # the nodes read on 19 and 20 days
    short.refresh_from_db()
    assert short.read_days == 18 and not short.permanent


def test_promotion_reports_progress_once_per_batch(make_note):
    for i in range(3):
        reads(make_note(f"Read on three days, {i}."), 3)
    beats: list[dict] = []
    assert promote(beat=lambda **kw: beats.append(kw))["count"] == 3
    assert beats == [{"count": 3, "threshold": 3}]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner, without statistics")
def test_promotion_reads_the_live_read_nodes_through_their_own_index(make_note):
    """A store is never ANALYZEd: without statistics SQLite took `decayed_at IS NULL` for a
    selective equality on the full decayed_at index (0017 replaced it) and walked every live node
    (1M: 1.1 s)."""
    from django.test.utils import CaptureQueriesContext

    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'")
        assert cursor.fetchone() is None, "the test database, like a store, has no statistics"
    reads(make_note("Read often."), 4)
    with CaptureQueriesContext(connection) as queries:
        promote()
    reading = [q["sql"] for q in queries.captured_queries if "access_count" in q["sql"]]
    assert len(reading) >= 3  # the count, the percentile, the nodes due
    with connection.cursor() as cursor:
        for sql in reading[:3]:
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
            plan = " ".join(str(row[-1]) for row in cursor.fetchall())
            assert "memory_node_read_live" in plan and "memory_node_decayed_at" not in plan, sql


def test_the_promotion_threshold_ignores_the_reads_of_decayed_nodes(make_note) -> None:
    live, gone = make_note("Read on four days."), make_note("Read on fifty days, then let go.")
    reads(live, 4), reads(gone, 50)
    let_go(gone.pk, actor="owner")
    assert promotion_threshold() == 4


def test_the_promotion_threshold_ignores_unread_nodes(make_note) -> None:
    hot = make_note("Read on ten days.")
    reads(hot, 10)
    for i in range(19):
        make_note(f"Never read {i}.")
    assert promotion_threshold() == 10


def test_the_promotion_floor_holds_when_nodes_were_read_once(make_note):
    from memory.sleep.promote import FLOOR, promote, promotion_threshold

    read_once = [make_note(f"a note read once, number {i}") for i in range(20)]
    Node.objects.filter(pk__in=[n.pk for n in read_once]).update(access_count=1, read_days=1)
    assert promotion_threshold() == FLOOR == 3
    promote()
    assert not Node.objects.filter(permanent=True).exists()


def test_a_one_day_burst_on_one_node_does_not_move_the_threshold(make_note):
    burst, steady = make_note("Read ten times in one day."), make_note("Read on three days.")
    for _ in range(10):
        read(burst.pk, actor="agent:scout")
    start = timezone.now()
    for day in range(3):
        with time_machine.travel(start + timedelta(days=day, hours=1)):
            read(steady.pk, actor="agent:scout")
    assert promotion_threshold() == 3
    assert promote()["count"] == 1
    steady.refresh_from_db()
    assert steady.permanent
