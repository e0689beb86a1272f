from __future__ import annotations

import json
from datetime import UTC, timedelta

from django.db import transaction
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import audit
from memory.chain import canonical, canonical_text
from memory.integrity import run_checks
from memory.models import Event, Node


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
