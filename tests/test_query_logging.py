"""Raw SQL goes through Django's cursor with %s placeholders, so it also works while queries
are logged (GROVE_DEBUG, assertNumQueries): a '?' placeholder breaks Django's query logger."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboard.graph import neighbourhood
from memory.recall import recall
from memory.walk import around, open_walk


def test_recall_walk_and_the_graph_work_with_query_logging_on(make_note, root_note):
    note = make_note("Quokkas sleep in the shade at noon.", referent_time="2024-01-01T00:00:00Z")
    with CaptureQueriesContext(connection) as queries:
        assert [p["id"] for p in recall("quokkas shade", scope="both", domains=["personal"])] == [
            note.pk
        ]
        ticket = open_walk(root_note.pk, holder="agent:a", domains=["personal"])
        assert note.pk in [r["target"] for r in around(ticket, holder="agent:a")["routes"]]
        assert neighbourhood(note.pk, as_of=note.created_at) is not None
    assert any("memory_node_fts" in q["sql"] for q in queries.captured_queries)
