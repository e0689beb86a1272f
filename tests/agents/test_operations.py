"""The agents' operations (agents/operations.py), called as the doors call them but without HTTP or
MCP: remember, extract, propose, read, recall, context, walk and authority, and their refusals
in words. The doors themselves: test_api*.py and test_mcp*.py."""

from __future__ import annotations

import pytest

from agents.operations import (
    authority,
    context,
    extract_part,
    read_node,
    recall_packets,
    remember,
    walk,
)
from agents.operations import propose as agent_propose
from memory.errors import Forbidden, Invalid, NotFound
from memory.models import Event, Node
from memory.tokens import create_token
from review.ceremony import propose, seal
from tests._helpers.acts import root_as_owner


def test_an_agent_extracts_a_span_under_the_signature_it_names(make_note) -> None:
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
    token, _ = create_token(name="desk", domains=["personal", "work"])
    home = make_note("The heron nests by the weir.")
    work = make_note("The heron report for the weir survey.", domain="work")
    both = {item["id"] for item in context(token, q="heron weir")["items"]}
    assert both == {home.pk, work.pk}
    assert [item["id"] for item in context(token, q="heron weir", domain="work")["items"]] == [
        work.pk
    ]


def test_a_walk_step_names_the_target_it_refuses(make_note) -> None:
    token, _ = create_token(name="desk", domains=["personal"])
    node = make_note("Where the walk starts.")
    ticket = walk(token, "open", {"node_id": node.pk})["ticket"]
    with pytest.raises(Invalid) as refused:
        walk(token, "step", {"ticket": ticket, "direction": "origins", "target": "north"})
    assert refused.value.message == "target must be an integer"


def test_remember_answers_with_the_written_fields_and_keeps_the_metadata(root_note) -> None:
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


def _note(**fields) -> dict:
    """A remember request; an import with a source needs no origin."""
    data = {"body": "The heron nests by the weir.", "kind": "import", "jurisdiction": "home"}
    return {**data, "signature": "scout", "source": "field notes", **fields}


def test_an_agent_asks_for_authority_as_it_stood_then(make_note) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    node = make_note("The garden needs water.")
    proposed = propose(node.pk, actor="agent:scout")
    root_as_owner(node)
    assert authority(token, node.pk)["trust"] == "ground"
    then = authority(token, node.pk, as_of=proposed.at.isoformat())
    assert then["trust"] == "proposed"
    assert then["as_of"] == proposed.at.isoformat()
    assert [event["kind"] for event in then["events"]] == ["proposed"]


def test_an_extract_signed_with_text_that_is_not_text_is_refused_and_nothing_stored(
    make_note, counts
) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    node = make_note("The spare key hangs by the boiler.")
    before = counts()
    with pytest.raises(Invalid) as refused:
        extract_part(token, node.pk, {"start": 0, "end": 9, "signature": "\ud800"})
    assert refused.value.code == "bad_text"
    assert counts() == before


def test_an_extract_is_recorded_as_the_agents_act_through_its_token(make_note) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    node = make_note("The spare key hangs by the boiler.")
    status, part = extract_part(token, node.pk, {"start": 0, "end": 13, "signature": "Ada"})
    assert status == 201
    stored = Node.objects.get(pk=part["id"])
    assert (stored.signature, stored.token_id) == ("Ada", token.pk)
    arrived = Event.objects.get(node=stored, kind="arrived")
    assert (arrived.actor, arrived.token_id) == ("agent:scout", token.pk)


def test_an_agents_proposal_without_a_reason_records_none(make_note) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    node = make_note("The garden needs water.")
    assert agent_propose(token, node.pk, {})["trust"] == "proposed"
    assert Event.objects.get(node=node, kind="proposed").reason == ""


def test_an_agents_proposal_with_a_reason_that_is_not_text_is_refused_in_words(make_note) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    node = make_note("The garden needs water.")
    with pytest.raises(Invalid) as refused:
        agent_propose(token, node.pk, {"reason": 7})
    assert (refused.value.code, refused.value.message) == ("bad_field", "reason must be text")


def test_context_refuses_a_budget_that_is_not_text_as_bad_text(make_note) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    make_note("The heron nests by the weir.")
    with pytest.raises(Invalid) as refused:
        context(token, q="heron", budget="\ud800")
    assert refused.value.code == "bad_text"


def test_context_takes_a_limit_of_one_and_a_body_that_fills_the_budget_exactly(make_note) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    node = make_note("heron by")  # 8 characters: 2 tokens
    make_note("The heron nests by the weir, far from the road.")
    one = context(token, q="heron", limit=1)
    assert len(one["items"]) + one["skipped"] == 1
    exact = context(token, q="heron by", budget=2)
    assert [item["id"] for item in exact["items"]] == [node.pk]
    assert exact["used"] == 2


def test_context_skips_each_node_hidden_after_recall_and_reads_on(make_note, monkeypatch) -> None:
    import agents.operations as operations

    token, _ = create_token(name="scout", domains=["personal"])
    for i in range(3):
        make_note(f"Heron sighting number {i} by the weir.")
    every = context(token, q="heron weir")
    assert len(every["items"]) == 3
    assert every["used"] == sum(item["tokens"] for item in every["items"])
    recall_packets = operations.recall_packets
    sealed: list[int] = []

    def then_the_owner_seals_two(token, **kw):
        packets = recall_packets(token, **kw)
        for packet in packets["results"][:2]:  # the first two: a break would skip the third
            seal(packet["id"], owner="owner")
            sealed.append(packet["id"])
        return packets

    monkeypatch.setattr(operations, "recall_packets", then_the_owner_seals_two)
    after = context(token, q="heron weir")
    assert after["skipped"] == 2
    left = {item["id"] for item in every["items"]} - set(sealed)
    assert [item["id"] for item in after["items"]] == list(left)


def test_a_walk_refuses_text_that_is_not_text_as_bad_text(db) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    with pytest.raises(Invalid) as refused:
        walk(token, "around", {"ticket": "\ud800"})
    assert refused.value.code == "bad_text"


def test_a_walk_step_to_id_zero_is_refused_naming_the_range_from_one(make_note) -> None:
    from memory.visibility import MAX_ID

    token, _ = create_token(name="scout", domains=["personal"])
    node = make_note("The heron nests by the weir.")
    ticket = walk(token, "open", {"node_id": node.pk})["ticket"]
    with pytest.raises(Invalid) as refused:
        walk(token, "step", {"ticket": ticket, "direction": "origins", "target": 0})
    assert refused.value.message == f"target must be between 1 and {MAX_ID}"


def test_remember_with_an_empty_domain_writes_to_the_tokens_first(db) -> None:
    token, _ = create_token(name="scout", domains=["work", "personal"])
    status, written = remember(token, _note(domain=""))
    assert (status, written["domain"]) == (201, "work")
    with pytest.raises(Forbidden) as refused:
        remember(token, _note(domain="garden"))
    assert refused.value.message == (
        "domain 'garden' is not allowed for this token (allowed: work, personal)"
    )


def test_remember_refuses_origins_that_are_not_a_list_in_words(db) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    with pytest.raises(Invalid) as refused:
        remember(token, _note(origins={"id": 1}))
    assert (refused.value.code, refused.value.message) == (
        "bad_origin",
        "origins must be a list of {id, relation}",
    )


def test_a_foreign_origin_after_a_malformed_one_is_still_answered_unknown(make_note) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    foreign = make_note("Quarterly numbers.", domain="work")
    origins = [{"id": "not a number"}, {"id": foreign.pk}]
    with pytest.raises(Invalid) as refused:
        remember(token, _note(origins=origins))
    assert (refused.value.code, refused.value.message) == (
        "unknown_origin",
        f"unknown origin node(s): [{foreign.pk}]",
    )


def test_remember_refuses_metadata_that_is_not_an_object_by_code(db) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    with pytest.raises(Invalid) as refused:
        remember(token, _note(metadata=["a", "list"]))
    assert refused.value.code == "bad_field"


def test_remember_without_a_signature_is_refused_as_unsigned(db, counts) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    before = counts()
    data = _note()
    del data["signature"]
    with pytest.raises(Invalid) as refused:
        remember(token, data)
    assert refused.value.code == "unsigned"
    assert counts() == before


def test_an_agents_read_is_recorded_as_read_by_the_agent(make_note) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    node = make_note("The heron nests by the weir.")
    assert read_node(token, node.pk)["body"] == node.body
    node.refresh_from_db()
    assert node.last_read_by == "agent:scout"


def test_an_unknown_walk_action_is_named_in_the_refusal(db) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    with pytest.raises(Invalid) as refused:
        walk(token, "jump", {"ticket": "t"})
    assert (refused.value.code, refused.value.message) == (
        "bad_action",
        "unknown walk action 'jump'",
    )


def test_recall_refuses_a_query_that_is_not_text_as_bad_text(make_note) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    make_note("The heron nests by the weir.")
    with pytest.raises(Invalid) as refused:
        recall_packets(token, q="heron \ud800")
    assert refused.value.code == "bad_text"


def test_context_items_carry_the_packets_fields_and_honour_scope_and_limit(make_note) -> None:
    token, _ = create_token(name="desk", domains=["personal"])
    node = make_note("Wild lore: the heron nests by the weir.", jurisdiction="wild", source="b.md")
    assert context(token, q="heron weir", scope="home")["items"] == []
    found = context(token, q="heron weir", scope="wild", limit=5)
    (item,) = found["items"]
    tokens = -(-len(node.body) // 4)
    assert {k: v for k, v in item.items() if k != "score"} == {
        "jurisdiction": "wild",
        "id": node.pk,
        "trust": "unreviewed",
        "kind": "note",
        "source": "b.md",
        "tokens": tokens,
        "body": node.body,
    }
    for field, value in (("budget", 0), ("limit", 101)):
        with pytest.raises(Invalid) as refused:
            context(token, q="heron", **{field: value})
        assert refused.value.message.startswith(f"{field} must be")


def test_context_skips_a_body_hidden_between_recall_and_read(make_note, monkeypatch) -> None:
    import agents.operations as operations

    token, _ = create_token(name="desk", domains=["personal"])
    make_note("The heron nests by the weir.")

    def sealed_meanwhile(*args, **kwargs):
        raise NotFound("no node here")

    assert len(operations.context(token, q="heron weir")["items"]) == 1
    monkeypatch.setattr(operations, "read_node", sealed_meanwhile)
    found = operations.context(token, q="heron weir")
    assert (found["items"], found["skipped"], found["used"]) == ([], 1, 0)


def test_an_agents_proposal_keeps_its_reason_and_refuses_one_that_is_not_text(make_note) -> None:
    from agents.operations import propose
    from memory.models import Event, EventKind

    token, _ = create_token(name="desk", domains=["personal"])
    node = make_note("The weir was rebuilt in 1911.")
    with pytest.raises(Invalid) as refused:
        propose(token, node.pk, {"reason": 42})
    assert refused.value.code == "bad_field"
    propose(token, node.pk, {"reason": "the parish record says so"})
    (event,) = Event.objects.filter(node=node, kind=EventKind.PROPOSED)
    assert "parish record" in event.reason + str(event.detail)


def test_the_agents_door_refuses_origins_that_are_not_a_list_and_signs_turns(db, settings) -> None:
    from agents.operations import commit_turn, remember

    token, _ = create_token(name="desk", domains=["personal"])
    note = {"body": "x", "kind": "note", "jurisdiction": "home", "origins": "12"}
    with pytest.raises(Invalid) as refused:
        remember(token, note)
    assert refused.value.code == "bad_origin"
    turn = {"conversation": "c1", "user": "hi", "assistant": "hello", "signature": "scout-v2"}
    _, written = commit_turn(token, turn)
    assert Node.objects.get(pk=written["id"]).signature == "scout-v2"


def test_a_note_remembered_by_an_agent_is_recorded_as_the_agents_arrival(root_note) -> None:
    from memory.models import Event, EventKind, Node

    token, _ = create_token(name="desk", domains=["personal"])
    note = {"body": "The weir.", "kind": "note", "jurisdiction": "home", "signature": "desk"}
    note["origins"] = [{"id": root_note.pk}]
    with pytest.raises(Invalid) as refused:
        remember(token, {**note, "metadata": ["not", "an", "object"]})
    assert refused.value.message == "metadata must be an object"
    _, written = remember(token, note)
    node = Node.objects.get(pk=written["id"])
    assert node.source == ""
    arrived = Event.objects.get(node=node, kind=EventKind.ARRIVED)
    assert arrived.actor == "agent:desk"


def test_an_agents_walk_opens_in_the_scope_asked_and_names_a_bad_node_id(make_note) -> None:
    token, _ = create_token(name="desk", domains=["personal"])
    wild = make_note("Heard at the market: the weir floods.", jurisdiction="wild", source="m.md")
    assert walk(token, "open", {"node_id": wild.pk, "scope": "wild"})["ticket"]
    with pytest.raises(NotFound):
        walk(token, "open", {"node_id": wild.pk, "scope": "home"})
    with pytest.raises(Invalid) as refused:
        walk(token, "open", {"node_id": "the weir"})
    assert refused.value.message.startswith("node_id ")


def test_an_agent_asking_authority_as_of_a_time_the_node_had_decayed_gets_not_found(
    make_note,
) -> None:
    from django.utils import timezone

    from memory.forgetting import let_go, restore

    token, _ = create_token(name="desk", domains=["personal"])
    node = make_note("The weir floods in March.")
    let_go(node.pk, actor="owner")
    while_decayed = timezone.now().isoformat()
    restore(node.pk, actor="owner")
    assert authority(token, node.pk)["id"] == node.pk
    with pytest.raises(NotFound):
        authority(token, node.pk, as_of=while_decayed)
    with pytest.raises(Invalid) as bad_limit:
        recall_packets(token, q="weir", limit=0)
    assert bad_limit.value.message.startswith("limit ")
    with pytest.raises(Invalid) as bad_action:
        walk(token, "fly", {"ticket": "t"})
    assert bad_action.value.code == "bad_action"


def test_an_agents_recall_returns_ten_results_unless_asked_for_more(make_note) -> None:
    token, _ = create_token(name="desk", domains=["personal"])
    for i in range(12):
        make_note(f"Heron sighting number {i} by the weir.")
    assert len(recall_packets(token, q="heron sighting")["results"]) == 10
    assert len(recall_packets(token, q="heron sighting", limit=12)["results"]) == 12
