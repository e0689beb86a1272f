"""Recall in scripts written without spaces, through the trigram index (migration 0009)."""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection

from memory.recall import recall


def ids(packets) -> list[int]:
    return [p["id"] for p in packets]


def trigram_rows() -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT rowid FROM memory_node_trigram")
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.sqlite_only  # FTS5's tokens; PostgreSQL finds 東京 by substring (next tests)
def test_a_two_character_query_finds_its_note_inside_a_longer_run(make_note):
    tower = make_note("東京タワーは赤い")
    make_note("京都の寺は静かだ")
    with connection.cursor() as cursor:  # the word index alone cannot: one token per run
        cursor.execute("SELECT count(*) FROM memory_node_fts WHERE memory_node_fts MATCH '東京'")
        assert cursor.fetchone()[0] == 0
    assert ids(recall("東京")) == [tower.pk]


def test_a_longer_substring_goes_through_the_trigram_index(make_note):
    tower = make_note("東京タワーは赤い")
    make_note("大阪城は白い")
    assert ids(recall("タワー")) == [tower.pk]
    assert ids(recall("赤い東京タワー")) == []  # a run is a substring, not a bag of trigrams


def test_thai_text_is_found_by_a_word_inside_it(make_note):
    note = make_note("ฉันชอบกินข้าวผัดที่กรุงเทพ")
    assert ids(recall("กรุงเทพ")) == [note.pk]


@pytest.mark.sqlite_only  # SQLite's trigram table; PostgreSQL indexes every body (pg_trgm)
def test_only_bodies_in_such_scripts_are_in_the_trigram_index(make_note):
    latin = make_note("The heron nests by the pond.")
    kana = make_note("サギが池にいる")
    assert kana.pk in trigram_rows() and latin.pk not in trigram_rows()


def test_the_trigram_index_keeps_to_the_callers_domains(make_note):
    note = make_note("東京タワーは赤い", domain="work")
    assert ids(recall("東京", domains=["work"])) == [note.pk]
    assert recall("東京", domains=["personal"]) == []


@pytest.mark.sqlite_only  # SQLite's trigram trigger; PostgreSQL's index needs none
def test_a_raw_insert_is_indexed_by_the_trigger(make_note):
    seed = make_note("seed")
    body = "漢字のテスト"
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_node (body, body_hash, content_key, jurisdiction, kind, domain, "
            "signature, source, metadata, created_at, scroll_path, scroll_hash, access_count, "
            "permanent) SELECT %s, %s, %s, jurisdiction, kind, domain, signature, "
            "source, metadata, created_at, '', '', 0, 0 FROM memory_node WHERE id = %s",
            [body, hashlib.sha256(body.encode()).hexdigest(), "0" * 64, seed.pk],
        )
        new_id = cursor.lastrowid
    assert new_id in trigram_rows()
