from __future__ import annotations

import json
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from memory import audit
from memory.chain import canonical
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
