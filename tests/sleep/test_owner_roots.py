"""The owner's words are roots (memory/write.py's owner=True, read by memory/reach.py): what the
owner writes on the dashboard holds itself and what it depends on, as Keep does; the same shape
written by an agent is forgotten when nothing holds it."""

from __future__ import annotations

import pytest
from django.test import Client

from memory.errors import Forbidden
from memory.models import Edge, EdgeKind, Event, EventKind, Node
from memory.sleep.decay import decay
from memory.tokens import create_token
from memory.write import write_node
from tests._helpers.agents import make_agent, write_note
from tests._helpers.nodes import is_decayed


@pytest.fixture
def planted(owner_client, lone, settings) -> Node:
    """A question the owner planted on the dashboard, about an old internet page."""
    subject = lone("The boiler manual, page 4.", days_old=40)
    owner_client.post(
        "/review/questions/plant/", {"body": "When is it serviced?", "about": subject.pk}
    )
    settings.GROVE_DECAY_MIN_AGE_DAYS = 0
    return Node.objects.get(kind="question")


def _answer(question: Node) -> Node:
    edge = Edge.objects.get(to_node=question, kind=EdgeKind.ANSWERS)
    return edge.from_node


def test_the_owners_answer_on_the_dashboard_survives_a_sleep(owner_client, planted):
    owner_client.post(f"/review/questions/{planted.pk}/answer/", {"text": "In March."})
    answer = _answer(planted)
    decay()
    assert not is_decayed(answer) and not is_decayed(planted)


def test_an_agents_answer_of_the_same_shape_is_forgotten(planted):
    agent = make_agent(Client())
    written = write_note(agent, planted, body="In March.")
    agent.post(f"questions/{planted.pk}/answer", {"node": written.json()["id"]})
    answer = _answer(planted)
    decay()
    assert is_decayed(answer)


def test_the_owners_extract_holds_itself_and_the_page_it_came_from(owner_client, lone, settings):
    page = lone("The boiler is serviced every March by the same firm.", days_old=40)
    owner_client.post(f"/node/{page.pk}/extract/", {"start": 0, "end": 30})
    settings.GROVE_DECAY_MIN_AGE_DAYS = 0
    part = Node.objects.latest("id")
    assert part.body == page.body[:30]
    decay()
    assert not is_decayed(part) and not is_decayed(page)


def test_the_owners_words_are_on_the_record_as_kept(owner_client, planted):
    (kept,) = Event.objects.filter(node=planted, kind=EventKind.KEPT)
    assert (kept.reason, kept.actor) == ("owner_wrote", "owner")


def test_a_write_through_an_agent_token_cannot_claim_the_owners_words(db):
    token, _secret = create_token(name="scout", domains=["personal"])
    with pytest.raises(Forbidden):
        write_node(
            body="Mine, says the agent.",
            kind="internet",
            jurisdiction="wild",
            signature="scout",
            source="https://example.org",
            token=token,
            owner=True,
        )
    assert not Node.objects.exists()
