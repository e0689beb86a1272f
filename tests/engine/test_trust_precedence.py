"""Trust precedence over every ordered pair of authority events: sealed (the later of seal and
unseal is a seal) > rejected > superseded > ground > proposed (the later of propose and decline
is a proposal) > unreviewed. The oracle below is the design's sentence, written apart from the
code; both readings of the rule (trust_map in Python, with_trust in SQL) must give it, now and
as of the instant between the two events."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory.models import Node, Trust
from memory.trust import trust_map, with_trust


def mark(node: Node, kind: str, *, at) -> None:
    """The event as the ceremony would leave it (raw SQL: some pairs no ceremony allows, such as
    a root after a rejection, and the rule must still give the designed trust)."""
    detail = {"body_hash": node.body_hash, "adopting_words": "I hold this."}
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) "
            "VALUES (%s, %s, %s, 'owner', '', '{}', %s)",
            [connection.ops.adapt_datetimefield_value(at), kind, node.pk, json.dumps(detail)],
        )


KINDS = ("proposed", "declined", "rooted", "superseded", "sealed", "unsealed", "rejected")
ONCE = ("rooted", "superseded")  # the database refuses a second verdict (the test below)
PAIRS = [(a, b) for a, b in itertools.product(KINDS, repeat=2) if not (a == b and a in ONCE)]


def oracle(sequence: tuple[str, ...]) -> str:
    def later(on: str, off: str) -> bool:
        last = {kind: i for i, kind in enumerate(sequence)}
        return on in last and last[on] > last.get(off, -1)

    if later("sealed", "unsealed"):
        return Trust.SEALED
    for kind, trust in (
        ("rejected", Trust.REJECTED),
        ("superseded", Trust.SUPERSEDED),
        ("rooted", Trust.GROUND),
    ):
        if kind in sequence:
            return trust
    if later("proposed", "declined"):
        return Trust.PROPOSED
    return Trust.UNREVIEWED


def test_the_oracle_says_what_the_design_says():
    # The oracle is checked against the sentences it stands for before it judges the code.
    assert oracle(("sealed", "unsealed")) == Trust.UNREVIEWED
    assert oracle(("rooted", "sealed")) == Trust.SEALED
    assert oracle(("rooted", "sealed", "unsealed")) == Trust.GROUND
    assert oracle(("rejected", "rooted")) == Trust.REJECTED
    assert oracle(("proposed", "declined")) == Trust.UNREVIEWED
    assert oracle(("declined", "proposed")) == Trust.PROPOSED
    assert oracle(("rooted", "superseded")) == Trust.SUPERSEDED


@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a}-then-{b}" for a, b in PAIRS])
def test_every_pair_of_authority_events_gives_the_designed_trust(make_note, first, second):
    node = make_note(f"A node that was {first}, then {second}.")
    start = timezone.now() - timedelta(hours=2)
    mark(node, first, at=start)
    mark(node, second, at=start + timedelta(hours=1))
    expected = oracle((first, second))
    assert trust_map([node.pk])[node.pk] == expected
    assert with_trust(Node.objects.filter(pk=node.pk)).get().trust == expected
    between = start + timedelta(minutes=30)
    assert trust_map([node.pk], as_of=between)[node.pk] == oracle((first,))
    annotated = with_trust(Node.objects.filter(pk=node.pk), as_of=between).get().trust
    assert annotated == oracle((first,))


@pytest.mark.parametrize("kind", ONCE)
def test_a_second_verdict_of_one_kind_is_refused_by_the_database(make_note, kind):
    node = make_note(f"A node {kind} once.")
    mark(node, kind, at=timezone.now())
    with pytest.raises(IntegrityError, match="second_verdict"), transaction.atomic():
        mark(node, kind, at=timezone.now())
