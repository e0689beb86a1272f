"""Reading and verifying the hash chain: the tail and the rows read, what a report says, where an
incremental run starts, the anchor file."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import time_machine
from django.db import transaction

from memory import audit, chain
from memory.custody.chain_verify import (
    anchors_disagree,
    full_due,
    last_checkpoint,
    verify,
    verify_from_checkpoint,
)
from memory.models import ChainCheckpoint, Event
from tests._helpers.vendor import drop_trigger, raw


def _events() -> list[Event]:
    return list(Event.objects.order_by("id"))


def test_a_break_reports_how_far_the_chain_held(make_note):
    make_note("First words.")
    make_note("Second words.")
    events = _events()
    bad, before = events[-1], events[-2]
    drop_trigger("memory_event_no_update")
    raw("UPDATE memory_event SET reason = 'forged' WHERE id = %s", (bad.pk,))
    report = verify()
    assert (report.first_id, report.through_id) == (events[0].pk, before.pk)
    assert (report.through_hash, report.count) == (before.chain_hash, len(events) - 1)
    assert report.broken == (
        f"event {bad.pk} ({bad.kind}) does not match its content and link: "
        "the record was edited at or before it"
    )


def test_an_event_without_a_chain_hash_is_named_so(make_note):
    make_note("Unchained words.")
    last = _events()[-1]
    drop_trigger("memory_event_no_update")
    raw("UPDATE memory_event SET chain_hash = NULL WHERE id = %s", (last.pk,))
    assert verify().broken.startswith(f"event {last.pk} ({last.kind}) has no chain hash: ")


def test_verifying_from_the_tail_reports_the_tail_and_nothing_counted(make_note):
    make_note("Words.")
    tail = _events()[-1]
    report = verify(after=tail.pk, prev=tail.chain_hash)
    assert report.ok
    assert (report.first_id, report.through_id, report.count) == (None, tail.pk, 0)
    assert report.through_hash == tail.chain_hash


def test_an_empty_record_verifies_through_nothing(db):
    report = verify()
    assert report.ok and (report.first_id, report.through_id, report.count) == (None, None, 0)
    assert verify_from_checkpoint().ok and not ChainCheckpoint.objects.exists()


def test_each_incremental_run_starts_after_the_latest_checkpoint(make_note):
    make_note("First.")
    verify_from_checkpoint()
    make_note("Second.")
    second = verify_from_checkpoint()
    make_note("Third.")
    third = verify_from_checkpoint()
    assert third.first_id == second.through_id + 1
    assert last_checkpoint().event_id == third.through_id == _events()[-1].pk


def test_a_run_with_nothing_new_stores_no_checkpoint(make_note):
    make_note("Words.")
    verify_from_checkpoint()
    again = verify_from_checkpoint()
    assert again.ok and again.count == 0
    assert ChainCheckpoint.objects.count() == 1


def test_only_a_run_from_the_first_event_is_stored_as_full(make_note):
    make_note("First.")
    verify_from_checkpoint()
    make_note("Second.")
    verify_from_checkpoint()
    make_note("Third.")
    verify_from_checkpoint(full=True)
    fulls = list(ChainCheckpoint.objects.order_by("id").values_list("full", flat=True))
    assert fulls == [True, False, True]


def test_a_full_run_is_due_a_week_after_the_last_full_checkpoint(make_note):
    make_note("Words.")
    assert full_due()
    verify_from_checkpoint()
    mark = ChainCheckpoint.objects.get()
    week = timedelta(days=7)
    assert not full_due(now=mark.verified_at + week)
    assert full_due(now=mark.verified_at + week + timedelta(microseconds=1))
    assert not full_due()


def test_an_incremental_checkpoint_does_not_put_off_the_full_run(make_note):
    make_note("First.")
    verify_from_checkpoint()
    make_note("Second.")
    verify_from_checkpoint()
    full = ChainCheckpoint.objects.get(full=True)
    later = full.verified_at + timedelta(days=7, microseconds=1)
    assert full_due(now=later)
    assert verify_from_checkpoint(full=None).first_id is None  # not due now: nothing new
    with time_machine.travel(later, tick=False):
        assert verify_from_checkpoint(full=None).first_id == _events()[0].pk  # due: from the start


def test_a_rewritten_checkpoint_event_is_named_with_when_it_was_verified(make_note):
    make_note("Words.")
    verify_from_checkpoint()
    mark = ChainCheckpoint.objects.get()
    drop_trigger("memory_event_no_update")
    raw("UPDATE memory_event SET chain_hash = %s WHERE id = %s", ("f" * 64, mark.event_id))
    report = verify_from_checkpoint()
    assert (report.first_id, report.through_id, report.count) == (None, None, 0)
    assert report.through_hash == chain.GENESIS  # nothing verified this time
    assert report.broken == (
        f"event {mark.event_id} no longer carries the hash verified at "
        f"{mark.verified_at.isoformat()}: run a full verification to find the first edit"
    )


def test_each_checkpoint_is_one_sorted_json_line_in_the_anchor_file(make_note, chain_anchor):
    make_note("First.")
    verify_from_checkpoint()
    make_note("Second.")
    verify_from_checkpoint()
    lines = chain_anchor.read_text(encoding="utf-8").splitlines()
    marks = ChainCheckpoint.objects.order_by("id")
    assert lines == [
        json.dumps(
            {
                "chain_hash": m.chain_hash,
                "event_id": m.event_id,
                "verified_at": m.verified_at.isoformat(),
            }
        )
        for m in marks
    ]


def test_the_anchor_file_may_sit_in_a_folder_not_made_yet(make_note, settings, tmp_path):
    settings.GROVE_CHAIN_ANCHOR = tmp_path / "not" / "yet" / "anchor.jsonl"
    make_note("Words.")
    verify_from_checkpoint()
    assert settings.GROVE_CHAIN_ANCHOR.is_file() and not anchors_disagree()


def test_a_malformed_anchor_line_is_reported_by_its_number(make_note, chain_anchor):
    make_note("Words.")
    verify_from_checkpoint()
    with chain_anchor.open("a", encoding="utf-8") as handle:
        handle.write('{"event_id": "x"}\n')
    assert anchors_disagree() == ["anchor line 2 is not a checkpoint: the anchor file was edited"]


def test_an_anchored_hash_the_event_no_longer_carries_is_named(make_note):
    make_note("Words.")
    verify_from_checkpoint()
    mark = ChainCheckpoint.objects.get()
    drop_trigger("memory_event_no_update")
    raw("UPDATE memory_event SET chain_hash = %s WHERE id = %s", ("e" * 64, mark.event_id))
    assert anchors_disagree() == [
        f"event {mark.event_id} does not carry the hash anchored at "
        f"{mark.verified_at.isoformat()}: the record was rewritten"
    ]


def test_no_anchor_file_is_nothing_to_disagree_with(db, chain_anchor):
    assert not chain_anchor.exists() and anchors_disagree() == []


@pytest.mark.django_db(transaction=True)
def test_the_tail_is_read_only_inside_a_transaction():
    with pytest.raises(RuntimeError, match=r"^the chain tail is read only under the write lock"):
        chain.tail_hash()
    with transaction.atomic():
        assert chain.tail_hash() == chain.GENESIS  # nothing yet: the first event links to it


def test_the_rows_are_read_in_id_order_batch_after_batch(make_note, monkeypatch):
    for words in ("One.", "Two.", "Three."):
        make_note(words)
    monkeypatch.setattr(chain, "_BATCH", 3)  # a full batch, then a short one
    ids = [row[0] for row in chain.event_rows(0)]
    assert ids == [e.pk for e in _events()] and len(ids) == 4
    assert [row[0] for row in chain.event_rows(ids[1])] == ids[2:]
    assert verify().count == len(ids)


def test_a_snapshot_spelled_another_way_with_the_same_content_still_verifies(make_note):
    make_note("Words.")
    arrival = Event.objects.filter(kind="arrived").order_by("-id").first()

    def respell(value: dict) -> str:  # compact, keys in another order: not the text chained
        return json.dumps(dict(reversed(list(value.items()))), separators=(",", ":"))

    drop_trigger("memory_event_no_update")
    raw(
        "UPDATE memory_event SET snapshot = %s, detail = %s WHERE id = %s",
        (respell(arrival.snapshot), respell(arrival.detail), arrival.pk),
    )
    assert verify().ok


# PostgreSQL hands jsonb back as text too (Django's loader), but in its own spelling (`": `,
# `", `), never the canonical text: the fast path has nothing to match there.
@pytest.mark.sqlite_only
def test_events_stored_as_their_canonical_text_verify_without_a_reparse(make_note, monkeypatch):
    nodes = [make_note(f"Swept words {i}.") for i in range(2)]
    before = _events()[-1]
    with transaction.atomic():
        audit.record_many(
            "decayed",
            [n.pk for n in nodes],
            actor="sleep",
            related={nodes[0].pk: nodes[1].pk},
            detail={"n": 2},
        )
    reparsed = []

    def full_way(**event):
        reparsed.append(event["node_id"])
        return real(**event)

    real = chain.event_digest
    monkeypatch.setattr(chain, "event_digest", full_way)
    report = verify(after=before.pk, prev=before.chain_hash)
    assert report.ok and report.count == 2 and reparsed == []


def test_an_event_with_a_related_node_and_a_token_verifies_the_full_way(make_note):
    from memory.tokens import create_token

    token, _ = create_token(name="helper", domains=["personal"])
    a, b = make_note("One side."), make_note("The other side.")
    with transaction.atomic():
        event = audit.record("kept", node=a, actor="agent:helper", related_node=b, token=token)
    assert (event.related_node_id, event.token_id) == (b.pk, token.pk)
    before = Event.objects.filter(pk__lt=event.pk).order_by("-id").first()
    report = verify(after=before.pk, prev=before.chain_hash)
    assert report.ok and report.count == 1
