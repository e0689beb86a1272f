"""The two noes: decline ("not now", the node stays unreviewed) and reject ("false", a
tombstone; ground only when the owner confirms twice)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from memory.errors import Conflict, Forbidden
from memory.models import Event, Node, Trust
from memory.trust import trust_map, trust_of, with_trust
from review.ceremony import can_root, can_supersede, decline, propose, reject
from tests._helpers.acts import root_as_owner

OWNER = "owner"


def _seen(node) -> set[str]:
    annotated = with_trust(Node.objects.filter(pk=node.pk)).get().trust
    return {annotated, trust_map([node.pk])[node.pk], trust_of(node.pk)}


@pytest.fixture
def proposed(make_note):
    node = make_note("The boiler is serviced every March.")
    propose(node.pk, actor="agent:scout", reason="seen in three notes")
    return node


def test_decline_makes_a_proposal_unreviewed_and_keeps_the_node(proposed):
    assert _seen(proposed) == {Trust.PROPOSED}
    event = decline(proposed.pk, owner=OWNER, reason="not now")
    assert _seen(proposed) == {Trust.UNREVIEWED}
    assert Node.objects.get(pk=proposed.pk).is_live
    assert event.detail["proposer"] == "agent:scout"
    assert event.detail["proposal"] == Event.objects.get(node=proposed, kind="proposed").pk


def test_a_declined_node_may_be_proposed_again(proposed):
    decline(proposed.pk, owner=OWNER)
    propose(proposed.pk, actor="agent:scout", reason="really, three notes")
    assert _seen(proposed) == {Trust.PROPOSED}
    kinds = list(
        Event.objects.filter(node=proposed)
        .exclude(kind="arrived")
        .order_by("at", "id")
        .values_list("kind")
    )
    assert [k for (k,) in kinds] == ["proposed", "declined", "proposed"]


def test_decline_refuses_what_is_not_proposed(make_note, proposed):
    with pytest.raises(Conflict, match="not proposed") as idle:
        decline(make_note("Idle.").pk, owner=OWNER)
    assert idle.value.code == "not_proposed"
    decline(proposed.pk, owner=OWNER)
    with pytest.raises(Conflict, match="not proposed"):
        decline(proposed.pk, owner=OWNER)


def test_decline_refuses_an_agent(proposed):
    with pytest.raises(Forbidden):
        decline(proposed.pk, owner="agent:scout")
    assert trust_of(proposed.pk) == Trust.PROPOSED


def test_rooting_after_a_decline_still_makes_ground(proposed):
    decline(proposed.pk, owner=OWNER)
    root_as_owner(proposed)
    assert _seen(proposed) == {Trust.GROUND}


def test_reject_refuses_ground_unless_confirmed_twice(make_note, counts):
    node = make_note("The spare key is with Ana.")
    root_as_owner(node)
    before = counts()
    with pytest.raises(Conflict, match="supersed"):
        reject(node.pk, owner=OWNER, reason="false")
    assert counts() == before and trust_of(node.pk) == Trust.GROUND
    reject(node.pk, owner=OWNER, reason="false", ground_confirmed=True)
    assert _seen(node) == {Trust.REJECTED}


def test_can_root_and_can_supersede_say_why_not(make_note, proposed):
    ground = make_note("The spare key is with Ana.")
    root_as_owner(ground)
    assert can_root(proposed, Trust.PROPOSED) is None
    assert "already ground" in str(can_root(ground, Trust.GROUND))
    assert can_supersede(ground, Trust.GROUND) is None
    assert "only ground" in str(can_supersede(proposed, Trust.PROPOSED))


def test_the_event_table_is_still_append_only_after_the_declined_migration(proposed):
    decline(proposed.pk, owner=OWNER)
    event_id = Event.objects.get(node=proposed, kind="declined").pk
    _refused("DELETE FROM memory_event WHERE id = %s", [event_id], "append_only")
    _refused(
        "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) "
        "VALUES ('2026-01-01', 'declinde', %s, 'owner', '', '{}', '{}')",
        [proposed.pk],
        "memory_event_kind_valid",
    )


def _refused(sql: str, params: list, match: str) -> None:
    with pytest.raises(DatabaseError, match=match), transaction.atomic():
        connection.cursor().execute(sql, params)
