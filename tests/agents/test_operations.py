"""The agents' operations (agents/operations.py), called as the doors call them but without HTTP or
MCP: remember, extract, propose, read, recall, context, walk and authority, and their refusals
in words. The doors themselves: test_api*.py and test_mcp*.py."""

from __future__ import annotations

import pytest

from memory.errors import Invalid, NotFound
from memory.models import Node


def test_an_agent_extracts_a_span_under_the_signature_it_names(make_note) -> None:
    from agents.operations import extract_part
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal"])
    parent = make_note("The heron nests by the weir. The otter fishes below it.")
    status, written = extract_part(
        token, parent.pk, {"start": 0, "end": 28, "signature": "desk-notes"}
    )
    assert status == 201 and Node.objects.get(pk=written["id"]).signature == "desk-notes"
    with pytest.raises(Invalid) as refused:
        extract_part(token, parent.pk, {"start": 0, "end": 28, "signature": 7})
    assert (refused.value.code, refused.value.message) == ("bad_field", "signature must be text")


def test_context_takes_a_budget_of_one_and_asks_recall_for_twenty_by_default(
    make_note, monkeypatch
) -> None:
    import agents.operations as operations
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal"])
    for i in range(3):
        make_note(f"Heron sighting number {i} by the weir.")
    tight = operations.context(token, q="heron weir", budget=1)
    assert (tight["query"], tight["budget"], tight["items"], tight["skipped"]) == (
        "heron weir",
        1,
        [],
        3,
    )
    found = operations.context(token, q="heron weir")
    packets = operations.recall_packets(token, q="heron weir")["results"]
    assert {i["id"]: i["score"] for i in found["items"]} == {p["id"]: p["score"] for p in packets}
    asked = []
    recall_packets = operations.recall_packets

    def counting(token, **kw):
        asked.append(kw["limit"])
        return recall_packets(token, **kw)

    monkeypatch.setattr(operations, "recall_packets", counting)
    operations.context(token, q="heron weir")
    assert asked == [20]


def test_context_keeps_to_the_domain_asked_for(make_note) -> None:
    from agents.operations import context
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal", "work"])
    home = make_note("The heron nests by the weir.")
    work = make_note("The heron report for the weir survey.", domain="work")
    both = {item["id"] for item in context(token, q="heron weir")["items"]}
    assert both == {home.pk, work.pk}
    assert [item["id"] for item in context(token, q="heron weir", domain="work")["items"]] == [
        work.pk
    ]


def test_a_walk_step_names_the_target_it_refuses(make_note) -> None:
    from agents.operations import walk
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal"])
    node = make_note("Where the walk starts.")
    ticket = walk(token, "open", {"node_id": node.pk})["ticket"]
    with pytest.raises(Invalid) as refused:
        walk(token, "step", {"ticket": ticket, "direction": "origins", "target": "north"})
    assert refused.value.message == "target must be an integer"


def test_remember_answers_with_the_written_fields_and_keeps_the_metadata(root_note) -> None:
    from agents.operations import remember
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal"])
    status, answer = remember(
        token,
        {
            "body": "The kettle descaler is under the sink.",
            "kind": "note",
            "jurisdiction": "home",
            "origins": [{"id": root_note.pk}],
            "metadata": {"room": "kitchen"},
            "signature": "desk",
        },
    )
    node = Node.objects.get(pk=answer["id"])
    assert (status, node.metadata) == (201, {"room": "kitchen"})
    assert answer == {
        "id": node.pk,
        "body_hash": node.body_hash,
        "status": "created",
        "jurisdiction": "home",
        "kind": "note",
        "domain": "personal",
        "created_at": node.created_at,
    }


def test_the_agents_door_refuses_in_its_own_words(make_note) -> None:
    from agents.operations import authority, recall_packets
    from memory.tokens import Unauthorized, authenticate, create_token

    token, secret = create_token(name="desk", domains=["personal"])
    with pytest.raises(Invalid) as empty:
        recall_packets(token, q=" ")
    assert empty.value.message == "q (the query) is required"
    work = make_note("A work note the desk token cannot see.", domain="work")
    with pytest.raises(NotFound) as outside:
        authority(token, work.pk)
    assert outside.value.message == f"no node {work.pk} here"  # read's answer, word for word
    with pytest.raises(Unauthorized) as unknown:
        authenticate("Bearer grv_not-a-token")
    assert unknown.value.message == "this token is unknown or revoked"
    assert token.last_used_at is None
    assert authenticate(f"Bearer {secret}").last_used_at is not None
