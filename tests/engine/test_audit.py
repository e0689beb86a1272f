from __future__ import annotations

import json
from datetime import UTC, timedelta

from django.db import connection, transaction
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import audit
from memory.chain import (
    GENESIS,
    _as_stored,
    canonical,
    canonical_text,
    digest_of_row,
    event_rows,
)
from memory.custody.chain_verify import verify
from memory.custody.integrity import run_checks
from memory.models import Event, Node
from tests._helpers.vendor import drop_trigger


def test_record_many_snapshots_a_node_exactly_as_record_does(make_note):
    node = make_note(
        "Read, then let go: every clock set.", days_old=3, referent_time="2024-02-29T12:00:00Z"
    )
    when = timezone.now() - timedelta(hours=1)
    Node.objects.filter(pk=node.pk).update(
        access_count=4,
        last_accessed_at=when,
        permanent_at=when,
        decayed_at=when,
    )
    with transaction.atomic():
        one = audit.record("decayed", node=node.pk, actor="sleep", reason="test")
        audit.record_many("decayed", [node.pk], actor="sleep", reason="test")
    many = Event.objects.filter(node=node, kind="decayed").latest("id")
    assert one.snapshot["referent_time"] and one.snapshot["permanent_at"]
    # As JSON text: 0 == False in Python, but not in the chain's canonical JSON.
    assert json.dumps(many.snapshot, sort_keys=True) == json.dumps(one.snapshot, sort_keys=True)
    assert not [r for r in run_checks(full_chain=True) if not r.ok]


def test_canonical_keeps_a_flat_snapshot_and_rewrites_anything_else():
    flat = {"a": 1, "b": "x", "c": None, "d": True}
    assert canonical(flat) is flat
    assert canonical({1: (2, 3)}) == {"1": [2, 3]}
    assert canonical({"f": 0.5, "n": {"k": 1}}) == {"f": 0.5, "n": {"k": 1}}


# Raw rows as a cursor may give them: any text, naive (SQLite) or aware (PostgreSQL) instants.
_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30)
# Bodies around the excerpt's length (280 characters) as often as short ones.
_BODY = st.tuples(_TEXT, st.integers(0, 300)).map(lambda p: "ż" * p[1] + p[0])
_WHEN = st.one_of(
    st.none(),
    st.datetimes(timezones=st.none()),
    st.datetimes(timezones=st.just(UTC)),
    st.datetimes(timezones=st.none()).map(lambda d: d.isoformat(sep=" ")),
)


@settings(max_examples=200, deadline=None)
@given(
    body=_BODY,
    texts=st.lists(_TEXT, min_size=6, max_size=6),
    reads=st.integers(0, 10**6),
    permanent=st.sampled_from([0, 1, False, True]),
    clocks=st.lists(_WHEN, min_size=5, max_size=5),
)
def test_snapshot_texts_spell_the_canonical_json_of_the_snapshot(
    body, texts, reads, permanent, clocks
):
    """snapshot_texts_from_rows against the snapshot built as a dict and encoded: the same text,
    for two rows sharing their clocks (the second read from what the first one cached)."""
    body_hash, kind, jurisdiction, domain, signature, source = texts
    last, permanent_at, decayed, created, referent = clocks
    row = (body, body_hash, kind, jurisdiction, domain, signature, source, reads, last,
           permanent, permanent_at, decayed, created, referent)  # fmt: skip
    expected = dict(zip(audit._SNAPSHOT_FIELDS, row, strict=True))
    for key in ("last_accessed_at", "permanent_at", "decayed_at", "created_at", "referent_time"):
        expected[key] = audit._instant(expected[key])
    expected["permanent"] = bool(permanent)
    expected = audit._snapshot_row(expected)
    texts_by_id = audit.snapshot_texts_from_rows([(1, *row), (2, *row)])
    assert texts_by_id[1] == texts_by_id[2] == canonical_text(canonical(expected))
    assert json.loads(texts_by_id[1]) == expected


def _sweep_events(make_note) -> list[int]:
    nodes = [make_note(f'Swept note {i}: \u6771\u4eac "quoted"', days_old=40) for i in range(3)]
    with transaction.atomic():
        audit.record_many("decayed", [n.pk for n in nodes], actor="sleep", reason="unreachable")
    return list(
        Event.objects.filter(kind="decayed", node__in=nodes)
        .order_by("id")
        .values_list("id", flat=True)
    )


def test_a_sweeps_events_verify_from_their_stored_text(make_note):
    """record_many stores canonical JSON, so the verifier hashes the stored texts as they are
    (on SQLite, where it reads text; PostgreSQL's jsonb gives values back)."""
    swept = _sweep_events(make_note)
    assert len(swept) == 3
    prev, fast = GENESIS, []
    for row in event_rows(0):
        if row[0] in swept:
            fast.append(_as_stored(row, prev))
        prev = digest_of_row(row, prev)
        assert prev == row[-1]
    assert all(fast) if connection.vendor == "sqlite" else not any(fast)
    assert verify().ok


def test_an_edited_snapshot_of_a_sweep_is_named_and_a_respelled_one_is_not(make_note):
    swept = _sweep_events(make_note)
    drop_trigger("memory_event_no_update")
    text = Event.objects.get(pk=swept[1]).snapshot
    # The same value spelled otherwise: compact with its keys reversed (hashed as stored, it
    # would not match), and with the ORM's separators.
    reversed_keys = dict(reversed(list(text.items())))
    for respelled in (
        json.dumps(reversed_keys, separators=(",", ":"), ensure_ascii=False),
        json.dumps(text),
    ):
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE memory_event SET snapshot = %s WHERE id = %s", [respelled, swept[1]]
            )
        assert verify().ok
    forged = canonical_text({**text, "excerpt": "Never said."})
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memory_event SET snapshot = %s WHERE id = %s", [forged, swept[1]])
    report = verify()
    assert report.broken and report.broken.startswith(f"event {swept[1]} (decayed)")


def test_events_split_over_several_inserts_keep_their_chain_order(make_note, monkeypatch):
    """Each INSERT holds a slice of the events in order; the chain runs across the slices."""
    monkeypatch.setattr(audit, "_EVENT_ROWS_PER_INSERT", 2)
    nodes = [make_note(f"Sliced note {i}.", days_old=40) for i in range(5)]
    with transaction.atomic():
        audit.record_many("decayed", [n.pk for n in nodes], actor="sleep", reason="unreachable")
    events = Event.objects.filter(kind="decayed").order_by("id")
    assert [e.node_id for e in events] == [n.pk for n in nodes]
    assert verify().ok


@settings(max_examples=200, deadline=None)
@given(value=st.datetimes(timezones=st.none()))
def test_a_naive_instant_is_spelled_as_its_utc_twin(value):
    """SQLite's naive UTC instants are spelled without building the aware copy (audit._instant):
    the same text as the aware instant gives."""
    assert audit._instant(value) == value.replace(tzinfo=UTC).isoformat()
    assert audit._instant(value.isoformat(sep=" ")) == value.replace(tzinfo=UTC).isoformat()
