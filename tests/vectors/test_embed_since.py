"""Sleep's embed step after a complete run (memory.vectors.embed.missing_ids with `since`): the
nodes written since the mark and those brought back since, and nothing else; the brought-back
ones are looked up by id, never by walking every live node below the mark. Real SQLite (no
statistics, as a store)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory.forgetting import let_go, restore
from memory.models import Node
from memory.vectors.embed import Since, get_embedder, missing_ids


@pytest.fixture
def marked(make_note):
    """Three notes without vectors below a complete run's mark: one let go and restored after
    the mark, one let go and left, one never touched; and one note written after the mark."""
    brought_back, left, untouched = (make_note(f"Below the mark {i}.") for i in range(3))
    let_go(brought_back.pk, actor="owner")
    let_go(left.pk, actor="owner")
    since = Since(through_id=untouched.pk, started=timezone.now() - timedelta(seconds=1))
    restore(brought_back.pk, actor="owner")
    new = make_note("After the mark.")
    return since, brought_back, untouched, new


def test_it_lists_what_arrived_and_what_came_back_since_the_mark(marked):
    since, brought_back, untouched, new = marked
    assert not Node.objects.get(pk=untouched.pk).vectors.exists(), "the fixture lacks vectors"
    found = missing_ids(get_embedder().name, since=since).tolist()
    assert found == [brought_back.pk, new.pk]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner, without statistics")
def test_what_came_back_is_looked_up_by_id(marked):
    since, *_ = marked
    with CaptureQueriesContext(connection) as queries:
        missing_ids(get_embedder().name, since=since)
    plans = []
    with connection.cursor() as cursor:
        for query in queries.captured_queries:
            cursor.execute("EXPLAIN QUERY PLAN " + query["sql"])
            plans += [str(row[-1]) for row in cursor.fetchall() if "memory_node" in str(row[-1])]
    assert plans, "the listing read the nodes"
    # Below the mark a node is found by its id; a range (rowid<) walks every live node there.
    assert not [p for p in plans if "rowid<" in p], plans
