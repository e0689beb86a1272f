"""The chain's canonical text, spelled out key by key (memory/chain.py), is the text that
json.dumps of the whole event with sorted keys gives; the batch path hashes as one event at a
time does. No database: these are pure functions."""

from __future__ import annotations

import hashlib
import json
import time
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memory.chain import GENESIS, canonical, canonical_text, chain_many, event_digest

# Every kind of text a body can hold: quotes, backslashes, control characters, non-ASCII.
TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)
PLAIN = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), TEXT)
SNAPSHOT = st.dictionaries(TEXT, PLAIN, max_size=8)
IDS = st.one_of(st.none(), st.integers(1, 2**40))


def reference_digest(**event) -> str:
    """The digest as the chain first defined it: json.dumps of the whole content."""
    content = {
        "prev": event["prev"],
        "at": event["at"].astimezone(UTC).isoformat(timespec="microseconds"),  # UTC, to the µs
        "kind": str(event["kind"]),
        "node": event["node_id"],
        "actor": event["actor"],
        "reason": event["reason"],
        "related_node": event["related_node_id"],
        "snapshot": canonical(event["snapshot"] or {}),
        "detail": canonical(event["detail"] or {}),
        "token": event["token_id"],
    }
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


AT = datetime(2026, 11, 30, 21, 0, 0, 123456, tzinfo=UTC)


# A fixed example besides the drawn ones: every field set, int keys that sort otherwise as text.
@settings(max_examples=300, deadline=None)
@example(
    snapshot={"body_hash": "ab", "n": 3, "flag": False, "none": None, "é": "東京"},
    detail={2: "two", 10: ["ten", None], "nested": {"k": (1, 2)}},
    node_id=7,
    related=11,
    token=5,
    actor="agent:ü",
    reason='a "quoted" reason',
)
@example(snapshot={}, detail={}, node_id="7", related=True, token=None, actor="", reason="")
@given(
    snapshot=SNAPSHOT,
    detail=st.dictionaries(TEXT, st.one_of(PLAIN, st.lists(PLAIN, max_size=3)), max_size=4),
    node_id=IDS,
    related=IDS,
    token=IDS,
    actor=TEXT,
    reason=TEXT,
)
def test_event_digest_is_the_json_of_the_whole_event(
    snapshot, detail, node_id, related, token, actor, reason
):
    event = {
        "prev": "ab" * 32,
        "at": AT,
        "kind": "decayed",
        "node_id": node_id,
        "actor": actor,
        "reason": reason,
        "related_node_id": related,
        "snapshot": snapshot,
        "detail": detail,
        "token_id": token,
    }
    assert event_digest(**event) == reference_digest(**event)


@settings(max_examples=100, deadline=None)
@example(
    events=[(3, None, {"a": 1}), (4, 9, {"b": "é", "c": None}), (5, 12, {})],
    actor="agent:a",
    reason="swept",
    detail={"n": 2, "why": "unreachable"},
)
@example(events=[(None, 3, {"a": 1}), (8, None, {})], actor="", reason="", detail={})
@given(
    events=st.lists(st.tuples(IDS, IDS, SNAPSHOT), min_size=1, max_size=6),
    actor=TEXT,
    reason=TEXT,
    detail=st.dictionaries(TEXT, PLAIN, max_size=3),
)
def test_chain_many_links_as_event_digest_one_at_a_time(events, actor, reason, detail):
    texts = [(n, r, canonical_text(canonical(s))) for n, r, s in events]
    many = chain_many(
        GENESIS, texts, at=AT, kind="decayed", actor=actor, reason=reason, detail=detail
    )
    prev, one_by_one = GENESIS, []
    for node_id, related, snapshot in events:
        prev = event_digest(
            prev=prev,
            at=AT,
            kind="decayed",
            node_id=node_id,
            actor=actor,
            reason=reason,
            related_node_id=related,
            snapshot=snapshot,
            detail=detail,
            token_id=None,
        )
        one_by_one.append(prev)
    assert len(set(many)) == len(many)
    assert many == one_by_one


def test_a_snapshot_stored_as_its_canonical_text_reads_back_to_the_same_digest():
    """What record_many stores is what the verifier hashes: the text parses back to the value."""
    snapshot = {"excerpt": 'quote " back \\ tab \t nul \x00 é 東京', "n": 3, "p": False}
    text = canonical_text(canonical(snapshot))
    assert json.loads(text) == snapshot
    assert canonical(json.loads(text)) == snapshot


def test_canonical_gives_what_json_gives_back():
    assert canonical({1: "a", "b": (1, 2)}) == {"1": "a", "b": [1, 2]}
    assert canonical({"a": {"b": (3,)}}) == {"a": {"b": [3]}}
    assert canonical((1, "é")) == [1, "é"]
    assert canonical({"x": 1.5}) == {"x": 1.5}


def test_a_flat_snapshot_is_returned_as_it_is():
    flat = {"body_hash": "ab", "n": 3, "flag": True, "none": None}
    assert canonical(flat) is flat
    assert canonical({}) == {}


def _digest_at(at) -> str:
    return event_digest(
        prev=GENESIS,
        at=at,
        kind="kept",
        node_id=1,
        actor="owner",
        reason="",
        related_node_id=None,
        snapshot={},
        detail={},
        token_id=None,
    )


def test_an_event_time_is_hashed_to_the_microsecond():
    assert _digest_at(AT) != _digest_at(AT + timedelta(microseconds=1))


def test_an_event_time_is_hashed_as_the_same_instant_however_it_is_spelled(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Tokyo")  # a machine zone that is not UTC
    time.tzset()
    try:
        tokyo = AT.astimezone(timezone(timedelta(hours=9)))
        spellings = [
            AT,
            tokyo,
            AT.replace(tzinfo=None),
            AT.isoformat(),
            "2026-11-30 21:00:00.123456",
        ]
        event = {"prev": GENESIS, "kind": "kept", "node_id": 1, "actor": "owner", "reason": ""}
        utc = reference_digest(
            **event, at=AT, related_node_id=None, snapshot={}, detail={}, token_id=None
        )
        assert {_digest_at(at) for at in spellings} == {utc}
    finally:
        monkeypatch.undo()
        time.tzset()


def test_an_empty_snapshot_text_in_a_batch_hashes_as_an_empty_snapshot():
    shared = {"at": AT, "kind": "decayed", "actor": "sleep", "reason": "r", "detail": {}}
    assert chain_many(GENESIS, [(1, None, "")], **shared) == chain_many(
        GENESIS, [(1, None, "{}")], **shared
    )
    assert chain_many(GENESIS, [(1, None, "")], **shared) == [
        reference_digest(
            prev=GENESIS, node_id=1, related_node_id=None, snapshot={}, token_id=None, **shared
        )
    ]


@pytest.mark.parametrize("snapshot", [None, {}])
def test_no_snapshot_or_detail_hashes_as_empty_ones(snapshot):
    base = {"prev": GENESIS, "at": AT, "kind": "kept", "node_id": None, "actor": "a", "reason": ""}
    event = {**base, "related_node_id": None, "token_id": None}
    assert event_digest(**event, snapshot=snapshot, detail=snapshot) == reference_digest(
        **event, snapshot={}, detail={}
    )
