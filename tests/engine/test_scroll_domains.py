"""A conversation belongs to a domain: the same name in two domains is two scrolls, with their
own sequence numbers and responds_to chains (issue 12, finding 5)."""

from __future__ import annotations

import json

import pytest

from memory.models import Edge, EdgeKind, Node
from memory.scroll import DEFAULT_DOMAIN, _append, commit_turn, scroll_dir, verify_scroll
from memory.write import ScrollPointer, write_node
from tests._helpers.agents import make_agent


@pytest.fixture(autouse=True)
def scrolls(tmp_path, settings):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"


def _turn(agent, user: str):
    response = agent.post("turns", {"conversation": "kitchen", "user": user, "assistant": "ok"})
    assert response.status_code == 201, response.content
    return Node.objects.get(pk=response.json()["id"])


def test_two_domains_posting_to_one_conversation_get_separate_scrolls(client, db):
    home = make_agent(client, name="home", domains=["personal"])
    work = make_agent(client, name="work", domains=["work"])
    first = _turn(home, "The spare key is under the pot.")
    second = _turn(work, "Quarterly numbers are due.")
    third = _turn(home, "And the oven is off.")
    assert first.scroll_path == "kitchen.jsonl" and second.scroll_path == "work/kitchen.jsonl"
    assert (first.metadata["seq"], second.metadata["seq"], third.metadata["seq"]) == (1, 1, 2)
    work_lines = (scroll_dir() / "work" / "kitchen.jsonl").read_text().splitlines()
    assert [json.loads(line)["user"] for line in work_lines] == ["Quarterly numbers are due."]
    assert b"spare key" not in (scroll_dir() / "work" / "kitchen.jsonl").read_bytes()
    assert verify_scroll("kitchen")["ok"] and verify_scroll("kitchen", domain="work")["ok"]


def test_no_responds_to_edge_crosses_domains(client, db):
    home = make_agent(client, name="home", domains=["personal"])
    work = make_agent(client, name="work", domains=["work"])
    first = _turn(home, "one")
    second = _turn(work, "two")
    third = _turn(home, "three")
    replies = Edge.objects.filter(kind=EdgeKind.RESPONDS_TO)
    assert list(replies.values_list("from_node", "to_node")) == [(third.pk, first.pk)]
    assert not replies.filter(from_node=second).exists()


def test_a_domain_continues_its_own_turns_in_an_older_shared_file(db):
    """Before scrolls had domains, a work turn sat in the top-level file; the next work turn
    goes to work's own file and still responds to it, never to a personal turn."""
    name, offset, record = _append("c", DEFAULT_DOMAIN, {"user": "w1", "domain": "work"})
    old = write_node(
        body="user: w1\nassistant: a",
        kind="pair",
        jurisdiction="home",
        signature="agent:work",
        domain="work",
        scroll=ScrollPointer(path=name, offset=offset, hash=record["sha256"]),
    ).node
    assert old.scroll_path == "c.jsonl"
    personal = commit_turn(conversation="c", user="p1", assistant="a").node
    assert personal.scroll_path == "c.jsonl"
    later = commit_turn(conversation="c", user="w2", assistant="a", domain="work").node
    assert later.scroll_path == "work/c.jsonl"
    assert Edge.objects.get(from_node=later, kind=EdgeKind.RESPONDS_TO).to_node_id == old.pk
    assert not Edge.objects.filter(from_node=personal, kind=EdgeKind.RESPONDS_TO).exists()


def test_an_unsafe_domain_cannot_name_a_scroll_folder(db, counts):
    before = counts()
    with pytest.raises(Exception, match="cannot name a scroll folder"):
        commit_turn(conversation="c", user="u", assistant="a", domain="../etc")
    assert counts() == before
