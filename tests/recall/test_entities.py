"""Entities: what the extractor finds, the rows sleep keeps, and recall's expansion through them."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from memory.models import Mention
from memory.recall import rank, recall
from memory.recall.entities import extract, record_mentions
from memory.sleep.run import run_sleep
from tests._helpers.texts import OTHER, SEEKER


def keys(text: str) -> list[str]:
    return [key for key, _ in extract(text)]


def test_it_finds_names_dates_and_quantities():
    found = dict(extract("We met Ada Lovelace in Paris on 7 May 2023 and paid $300 for 4 kids."))
    assert found["ada lovelace"] == "name" and found["paris"] == "name"
    assert found["7 may 2023"] == "date" and found["300 dollars"] == "quantity"
    assert found["4 kids"] == "quantity"


def test_a_capitalised_sentence_opener_is_no_name_but_a_run_keeps_its_name():
    assert keys("Wow. Thanks! Definitely worth it.") == []
    assert keys("Lately I've been reading Harry Potter.") == ["harry potter"]
    assert keys("The Louvre was shut.") == ["louvre"]


def test_sleep_writes_each_nodes_mentions_once(make_note):
    note = make_note(SEEKER)
    run_sleep(requested_by="test")
    first = set(Mention.objects.filter(node=note).values_list("entity", "kind"))
    assert first == {("ottoline brackwater", "name"), ("sunday", "date")}
    run_sleep(requested_by="test")
    assert Mention.objects.filter(node=note).count() == 2


@pytest.mark.parametrize(
    ("entity", "kind"), [("", "name"), ("paris", "person"), ("sunday", "date")]
)
def test_the_database_refuses_a_bad_or_repeated_mention(make_note, entity, kind):
    note = make_note(SEEKER)
    record_mentions(after_id=0, limit=None)
    assert Mention.objects.filter(node=note, entity="sunday", kind="date").exists()
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_mention (node_id, entity, kind) VALUES (%s, %s, %s)",
            [note.pk, entity, kind],
        )


@pytest.fixture
def pair(make_note):
    seeker, other = make_note(SEEKER), make_note(OTHER)
    make_note("Unrelated: the boiler hums at night.")
    return seeker, other


def test_recall_reaches_a_node_through_a_shared_entity_and_says_so(pair):
    seeker, other = pair
    with rank.using(entity=1.0):
        assert [p["id"] for p in recall("periwinkle trowel")] == [seeker.pk]  # no rows yet
        record_mentions(after_id=0, limit=None)
        hits = recall("periwinkle trowel", why=True)
    assert [p["id"] for p in hits] == [seeker.pk, other.pk]
    assert hits[1]["why"] == "entity: ottoline brackwater"


def test_an_entity_named_by_more_nodes_than_the_cap_is_not_followed(pair):
    seeker, other = pair
    record_mentions(after_id=0, limit=None)
    with rank.using(entity=1.0, entity_cap=2):
        assert other.pk in [p["id"] for p in recall("periwinkle trowel")]
    with rank.using(entity=1.0, entity_cap=1):
        assert [p["id"] for p in recall("periwinkle trowel")] == [seeker.pk]


def test_recall_without_entity_rows_still_answers(pair):
    seeker, _ = pair
    record_mentions(after_id=0, limit=None)
    Mention.objects.all().delete()
    with rank.using(entity=1.0):
        assert [p["id"] for p in recall("periwinkle trowel")] == [seeker.pk]


def test_the_owner_sees_a_nodes_entities_on_its_page_but_not_a_sealed_ones(client, make_note):
    from django.urls import reverse

    from dashboard.owner import ensure_owner
    from review.ceremony import seal

    note = make_note(SEEKER)
    record_mentions(after_id=0, limit=None)
    client.force_login(ensure_owner())
    page = client.get(reverse("node", args=[note.pk])).content.decode()
    assert 'id="node-entities"' in page and "sunday, ottoline brackwater</p>" in page
    seal(note.pk, owner="owner", reason="private")
    assert "ottoline" not in client.get(reverse("node", args=[note.pk])).content.decode().lower()
