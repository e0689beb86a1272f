"""Liveness never hides the index a query needs (migration 0017, docs/DESIGN.md "Two engines").

A store is never ANALYZEd. Without statistics SQLite took `decayed_at IS NULL` on the full
decayed_at index for a selective equality and walked every live node, ahead of the index the
query needed: at 100k, recall's date list 30 ms, the decay mark's candidates 47 ms. Real SQLite,
no statistics, as a store."""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from memory import reach
from memory.recall.dates import date_candidates
from memory.recall.lexical import document_frequencies
from memory.visibility import Visibility, live_at
from tests._helpers.plans import plans

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="SQLite's planner, without statistics"
)


def test_no_index_keys_the_live_nodes_under_one_value(db):
    """An index led by decayed_at must leave the NULLs (the live nodes) out: its only use is
    the forgotten."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'memory_node'"
        )
        indexes = cursor.fetchall()
    led = [(name, sql) for name, sql in indexes if sql and '("decayed_at"' in sql]
    assert led, "the forgotten have their index"
    for name, sql in led:
        assert 'WHERE "decayed_at" IS NOT NULL' in sql, (name, sql)


def test_the_date_list_walks_the_event_clock(make_note):
    make_note("Met Ana on 3 May 2024.")
    everything = Visibility(domains=None, scope="both", as_of=None)
    found = plans(lambda: date_candidates("what happened in May 2024", everything), "COALESCE")
    assert all("memory_node_event_time" in plan for plan in found), found


def test_the_decay_mark_reads_its_candidates_index(make_note):
    make_note("Old and unread.", days_old=400)
    found = plans(lambda: reach.mark(timezone.now()), "access_count = 0")
    assert all("memory_node_decay_candidates" in plan for plan in found), found


def test_liveness_by_id_is_answered_from_the_live_index(make_note):
    ids = [make_note(f"Live {i}.").pk for i in range(3)]
    found = plans(lambda: live_at(ids, as_of=None), "decayed_at IS NULL")
    assert all("COVERING INDEX memory_node_live" in plan for plan in found), found


def test_a_terms_visible_count_walks_the_terms_matches_not_the_live_nodes(make_note):
    # Led by the (domain, live) index, SQLite probed the word index once per live node of the
    # domain for each term of each recall: 2,100 nodes 0.12 s a recall, growing with the store.
    make_note("Ana waters the fern.")
    mine = Visibility(domains=("personal",), scope="both", as_of=None)
    found = plans(lambda: document_frequencies(["fern"], mine), "SELECT f.rowid")
    # The matches lead; each node is then looked up by its id (not walked by its domain).
    led = [p for p in found if "SCAN f VIRTUAL TABLE" in p]
    assert led and all("SEARCH n USING INTEGER PRIMARY KEY" in p for p in led), found
    assert all(p.index("SCAN f") < p.index("SEARCH n") for p in led), found
