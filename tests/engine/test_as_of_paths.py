"""As of T, off the main path: an edge or a node that came after T is invisible on every door
that takes an instant, and visible now (the after-check makes each one able to fail).

The world: A and B written ten days ago, D derived from A then; T is five days ago; since T, B
cites A (an edge between two old nodes) and C replies to A (a new node). Node rules as of T
(created after T, sealed, decayed) are the matrix's (tests/engine/test_visibility_matrix.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from dashboard.graph import neighbourhood
from memory.authority import authority_report
from memory.models import Edge, Node, Ticket
from memory.recall import recall
from memory.visibility import live_at
from memory.walk import around, open_walk, step
from tests._helpers.events import mark

A_WORDS = "Quillwort barometer readings from the lighthouse"
B_WORDS = "Marigold seed packets are in the red tin."
HOLDER = "agent:scout"


@dataclass
class World:
    a: Node
    b: Node
    c: Node
    d: Node
    then: datetime


@pytest.fixture
def world(lone, make_note) -> World:
    with time_machine.travel(timezone.now() - timedelta(days=10)):
        a, b = lone(A_WORDS + "."), lone(B_WORDS)
        d = make_note("Notes on the lighthouse log.", origins=[{"id": a.pk}])
    then = timezone.now() - timedelta(days=5)
    Edge.objects.create(from_node=b, to_node=a, kind="cites", created_by="fixture")
    reply = [{"id": a.pk, "relation": "responds_to"}]
    c = make_note("Replying about the barometer.", origins=reply)
    return World(a, b, c, d, then)


def routes(token: str) -> set[tuple[str, int]]:
    return {(r["direction"], r["target"]) for r in around(token, holder=HOLDER)["routes"]}


def test_the_walks_incoming_routes_are_the_edges_that_existed_as_of_then(world) -> None:
    assert ("in", world.b.pk) in routes(open_walk(world.a.pk, holder=HOLDER))
    then = routes(open_walk(world.a.pk, holder=HOLDER, as_of=world.then))
    assert ("in", world.d.pk) in then
    assert ("in", world.b.pk) not in then and ("in", world.c.pk) not in then


def test_a_walks_outgoing_routes_are_the_edges_that_existed_as_of_then(world) -> None:
    assert ("out", world.a.pk) in routes(open_walk(world.b.pk, holder=HOLDER))
    assert ("out", world.a.pk) not in routes(open_walk(world.b.pk, holder=HOLDER, as_of=world.then))


def test_a_step_keeps_the_walks_instant_on_its_next_ticket(world) -> None:
    token = open_walk(world.d.pk, holder=HOLDER, as_of=world.then)
    assert ("out", world.a.pk) in routes(token)
    token = step(token, holder=HOLDER, direction="out", target=world.a.pk)
    assert Ticket.objects.get(parent__isnull=False).as_of == world.then
    assert ("in", world.b.pk) not in routes(token)


def test_the_authority_report_as_of_then_has_no_origin_linked_later(world) -> None:
    assert [o["id"] for o in authority_report(world.b.pk)["origins"]] == [world.a.pk]
    assert authority_report(world.b.pk, as_of=world.then)["origins"] == []
    agent = authority_report(world.b.pk, domains=["personal"], as_of=world.then)
    assert agent["origins"] == []


def test_recall_as_of_then_lifts_no_neighbour_along_an_edge_made_later(world) -> None:
    # Only the incoming cites edge can bring B (no word of the query is B's).
    now = [p["id"] for p in recall("quillwort barometer", scope="both")]
    assert now[0] == world.a.pk and world.b.pk in now
    then = [p["id"] for p in recall("quillwort barometer", scope="both", as_of=world.then)]
    assert then[0] == world.a.pk and world.b.pk not in then and world.c.pk not in then


def test_the_graph_as_of_then_has_neither_the_later_edge_nor_the_later_node(world) -> None:
    now = neighbourhood(world.a.pk)
    assert {world.b.pk, world.c.pk, world.d.pk} <= set(now.nodes)
    then = neighbourhood(world.a.pk, as_of=world.then)
    assert world.d.pk in then.nodes
    assert world.b.pk not in then.nodes and world.c.pk not in then.nodes


def _links(client, node: Node, **params) -> set[int]:
    response = client.get(reverse("node", args=[node.pk]), params)
    assert response.status_code == 200
    ids = (n.pk for n in Node.objects.all())
    return {pk for pk in ids if reverse("node", args=[pk]) in response.text and pk != node.pk}


def test_the_node_page_as_of_then_links_no_neighbour_that_came_later(owner_client, world) -> None:
    assert {world.b.pk, world.c.pk, world.d.pk} <= _links(owner_client, world.a)
    then = _links(owner_client, world.a, as_of=world.then.isoformat())
    assert world.d.pk in then
    assert world.b.pk not in then and world.c.pk not in then


def test_the_owners_search_as_of_then_lifts_no_neighbour_along_a_later_edge(
    owner_client, world
) -> None:
    def shown(**params) -> set[int]:
        response = owner_client.get(reverse("search"), {"q": "quillwort barometer", **params})
        assert response.status_code == 200
        return {n.pk for n in Node.objects.all() if reverse("node", args=[n.pk]) in response.text}

    assert {world.a.pk, world.b.pk} <= shown(scope="both")
    then = shown(scope="both", as_of=world.then.isoformat())
    assert world.a.pk in then and world.b.pk not in then


def test_a_node_revived_after_its_decay_was_dead_between_and_live_after(lone) -> None:
    start = timezone.now()
    node = lone("Decayed, then written again.")
    mark(node, "decayed", at=start + timedelta(seconds=10))
    mark(node, "revived", at=start + timedelta(seconds=20))
    Node.objects.filter(pk=node.pk).update(decayed_at=None)  # the revival clears the flag
    assert live_at([node.pk], as_of=start + timedelta(seconds=5)) == {node.pk}
    assert live_at([node.pk], as_of=start + timedelta(seconds=15)) == set()
    assert live_at([node.pk], as_of=start + timedelta(seconds=25)) == {node.pk}


def test_a_node_revived_before_then_and_decayed_again_since_was_live_then(lone) -> None:
    start = timezone.now()
    node = lone("Decayed, revived, decayed again.")
    mark(node, "decayed", at=start + timedelta(seconds=10))
    mark(node, "revived", at=start + timedelta(seconds=20))
    mark(node, "decayed", at=start + timedelta(seconds=30))  # the flag is set again, at 30
    assert live_at([node.pk], as_of=start + timedelta(seconds=25)) == {node.pk}
    assert live_at([node.pk], as_of=start + timedelta(seconds=35)) == set()
    assert live_at([node.pk], as_of=None) == set()


def test_the_node_page_as_of_then_lists_no_event_recorded_later(owner_client, world) -> None:
    from memory.forgetting import keep
    from memory.models import Event

    keep(world.a.pk, actor="owner")
    kept = Event.objects.get(node=world.a, kind="kept")
    arrived = Event.objects.get(node=world.a, kind="arrived")
    now = owner_client.get(reverse("node", args=[world.a.pk])).text
    assert f'id="event-{kept.pk}"' in now
    then = owner_client.get(reverse("node", args=[world.a.pk]), {"as_of": world.then.isoformat()})
    assert f'id="event-{arrived.pk}"' in then.text and f'id="event-{kept.pk}"' not in then.text
