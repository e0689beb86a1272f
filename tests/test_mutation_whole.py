"""Behaviours that round 4's whole-module, one-child mutation run showed no test pinned (issue 16,
docs/mutation.md "Round 4"). Each test is named for the behaviour, not the mutant. Unit level:
the engine functions themselves, no browser and no worker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from _acts import root_as_owner

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
from memory.authority import authority_report, walk_back
from memory.errors import Conflict, Forbidden, Invalid, NotFound
from memory.models import ApiToken, Event, Node
from memory.tokens import (
    Unauthorized,
    active_token,
    authenticate,
    create_token,
    revoke_token,
)
from memory.trust import trust_counts, trust_map, with_trust
from memory.write import write_node
from review.ceremony import propose, reject, seal, unseal


def test_revoking_one_token_leaves_the_others_live(db) -> None:
    create_token(name="scout", domains=["personal"])
    create_token(name="desk", domains=["personal"])
    revoke_token(name="scout")
    assert ApiToken.objects.get(name="scout").revoked_at is not None
    assert ApiToken.objects.get(name="desk").revoked_at is None
    assert active_token(name="desk").name == "desk"


def test_an_active_token_is_found_by_its_own_name_and_an_unknown_name_is_named(db) -> None:
    create_token(name="scout", domains=["personal"])
    desk, _ = create_token(name="desk", domains=["work"])
    assert active_token(name="desk").pk == desk.pk
    with pytest.raises(Unauthorized) as unknown:
        active_token(name="nobody")
    assert unknown.value.message == "no active token named 'nobody'"


def test_a_refused_rearrival_tells_the_writer_the_owner_rejected_it(make_note) -> None:

    node = make_note("The moon is made of cheese.")
    reject(node.pk, owner="owner", reason="false")
    with pytest.raises(Conflict) as refused:
        write_node(
            body=node.body,
            kind="note",
            jurisdiction="home",
            signature="owner",
            origins=[{"id": node.pk}],
        )
    assert refused.value.code == "tombstoned"
    assert refused.value.message == "this content was rejected by the owner; it cannot arrive again"


def test_walk_back_gives_the_nodes_trust_and_the_adoptions_instant(make_note) -> None:

    node = make_note("The spare key hangs by the boiler.")
    root_as_owner(node, "Yes, by the boiler.")
    rooted = Event.objects.get(node=node, kind="rooted")
    back = walk_back(node.pk)
    assert back["trust"] == "ground"
    assert back["adoption"]["at"] == rooted.at.isoformat()
    assert back["adoption"]["actor"] == "owner"


def test_walk_back_of_a_sealed_node_answers_like_a_missing_one(make_note) -> None:

    node = make_note("The safe combination is 4-8-15.")
    root_as_owner(node)
    seal(node.pk, owner="owner")
    with pytest.raises(NotFound) as hidden:
        walk_back(node.pk)
    assert hidden.value.message == f"node {node.pk} not found"


def test_trust_counts_count_every_node_of_a_state(make_note) -> None:

    first, second = make_note("Sealed one."), make_note("Sealed two.")
    before = trust_counts()
    seal(first.pk, owner="owner")
    seal(second.pk, owner="owner")
    after = trust_counts()
    assert after["sealed"] == before["sealed"] + 2
    assert after["unreviewed"] == before["unreviewed"] - 2


def test_trust_counts_ignore_a_ceremony_event_on_no_node(make_note) -> None:
    # No ceremony writes one, but the log's table does not forbid it (an imported or hand-made
    # log could hold it): it is nobody's trust, so no count moves.

    make_note("Unreviewed, and stays counted so.")
    before = trust_counts()
    Event.objects.create(kind="sealed", node=None, actor="owner")
    assert trust_counts() == before


def test_trust_counts_take_the_callers_total_as_the_node_count(make_note) -> None:
    # The overview counts its nodes once and passes the total: no second count is made.

    make_note("One more unreviewed node.")
    nodes = Node.objects.count()
    assert trust_counts()["unreviewed"] == nodes
    assert trust_counts(total=nodes + 5)["unreviewed"] == nodes + 5


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


def test_with_trust_annotates_every_node_when_given_no_queryset(make_note) -> None:
    node = make_note("The garden needs water.")
    seal(node.pk, owner="owner")
    trusts = dict(with_trust().values_list("pk", "trust"))
    assert trusts[node.pk] == "sealed"
    assert len(trusts) == Node.objects.count()


def _note(**fields) -> dict:
    """A remember request; an import with a source needs no origin."""
    data = {"body": "The heron nests by the weir.", "kind": "import", "jurisdiction": "home"}
    return {**data, "signature": "scout", "source": "field notes", **fields}


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


def test_trust_map_and_with_trust_agree_when_the_clock_steps_back(make_note, monkeypatch) -> None:
    # One rule, two readings: both order a node's seal and unseal by (at, id).
    node = make_note("Sealed, then unsealed by a clock set back a minute.")
    later = datetime.now(UTC)
    monkeypatch.setattr("django.utils.timezone.now", lambda: later)
    seal(node.pk, owner="owner")
    monkeypatch.setattr("django.utils.timezone.now", lambda: later - timedelta(minutes=1))
    unseal(node.pk, owner="owner")
    annotated = with_trust(Node.objects.filter(pk=node.pk)).get().trust
    assert trust_map([node.pk])[node.pk] == annotated


def test_with_trust_as_of_an_instant_before_the_root_is_not_ground(make_note) -> None:
    node = make_note("The garden needs water.")
    proposed = propose(node.pk, actor="agent:scout")
    root_as_owner(node)
    then = with_trust(Node.objects.filter(pk=node.pk), as_of=proposed.at).get()
    assert then.trust == "proposed"


def test_a_node_made_permanent_at_the_as_of_instant_is_permanent_then(make_note) -> None:
    node = make_note("Made permanent by reads.", days_old=1)
    at = datetime.now(UTC)
    Node.objects.filter(pk=node.pk).update(permanent=True, permanent_at=at)
    then = authority_report(node.pk, as_of=at)
    assert (then["permanent"], then["permanent_at"]) == (True, at.isoformat())
    before = authority_report(node.pk, as_of=at - timedelta(seconds=1))
    assert (before["permanent"], before["permanent_at"]) == (False, None)


def test_an_authority_report_before_the_node_existed_names_the_instant(make_note) -> None:
    node = make_note("The garden needs water.")
    with pytest.raises(NotFound) as refused:
        authority_report(node.pk, as_of="2000-01-01T00:00:00Z")
    assert refused.value.message == f"node {node.pk} did not exist at 2000-01-01T00:00:00+00:00"


def test_an_authority_report_as_of_before_a_decay_shows_the_node_live_then(make_note) -> None:
    from memory.sleep.decay import let_go

    node = make_note("Let go by the owner today.", days_old=1)
    let_go(node.pk, actor="owner")
    assert authority_report(node.pk)["live"] is False
    then = authority_report(node.pk, as_of=datetime.now(UTC) - timedelta(hours=1))
    assert (then["live"], then["decayed_at"]) == (True, None)


def test_a_preview_keeps_a_body_of_exactly_its_length_and_cuts_a_longer_one_to_it(
    make_note,
) -> None:
    from memory.authority import PREVIEW_CHARS

    exact = make_note("e" * PREVIEW_CHARS)
    longer = make_note("l" * (PREVIEW_CHARS + 1))
    assert authority_report(exact.pk)["excerpt"] == exact.body
    assert authority_report(longer.pk)["excerpt"] == "l" * (PREVIEW_CHARS - 1) + "…"


def test_an_authority_report_lists_events_in_the_order_trust_reads_them(
    make_note, monkeypatch
) -> None:
    # (at, id): by the event clock, ties by id, even when the clock steps back between acts.
    node = make_note("Sealed, unsealed in one tick, then proposed a minute earlier.")
    tick = datetime.now(UTC)
    monkeypatch.setattr("django.utils.timezone.now", lambda: tick)
    seal(node.pk, owner="owner")
    unseal(node.pk, owner="owner")
    monkeypatch.setattr("django.utils.timezone.now", lambda: tick - timedelta(minutes=1))
    propose(node.pk, actor="agent:scout")
    kinds = [event["kind"] for event in authority_report(node.pk)["events"]]
    assert kinds == ["proposed", "sealed", "unsealed"]


def test_recall_refuses_a_query_that_is_not_text_as_bad_text(make_note) -> None:
    token, _ = create_token(name="scout", domains=["personal"])
    make_note("The heron nests by the weir.")
    with pytest.raises(Invalid) as refused:
        recall_packets(token, q="heron \ud800")
    assert refused.value.code == "bad_text"


def test_token_refusals_carry_their_codes_and_words(db) -> None:
    with pytest.raises(Invalid) as bad_name:
        create_token(name="no spaces", domains=["personal"])
    assert bad_name.value.code == "bad_token_name"
    with pytest.raises(Invalid) as bad_domain:
        create_token(name="scout", domains=["no spaces"])
    assert bad_domain.value.message == "domain 'no spaces' is not a valid label"
    with pytest.raises(Invalid) as bare:
        create_token(name="scout", domains=[])
    assert bare.value.message == "a token needs at least one domain (--domain)"


def test_a_secret_carries_32_random_bytes(db) -> None:
    _, secret = create_token(name="scout", domains=["personal"])
    assert secret.startswith("grv_") and len(secret) == len("grv_") + 43  # 32 bytes, base64


def test_a_bearer_header_is_split_at_its_first_space(db) -> None:
    token, secret = create_token(name="scout", domains=["personal"])
    assert authenticate(f"Bearer  {secret}").pk == token.pk  # the secret is stripped
    with pytest.raises(Unauthorized) as two_words:
        authenticate(f"Bearer {secret} extra")
    assert two_words.value.code == "bad_token"
    with pytest.raises(Unauthorized) as basic:
        authenticate(f"Basic {secret}")
    assert basic.value.code == "no_token"


def test_authenticate_stores_the_last_use_at_most_once_a_minute(db, monkeypatch) -> None:
    token, secret = create_token(name="scout", domains=["personal"])
    tick = datetime.now(UTC)
    monkeypatch.setattr("django.utils.timezone.now", lambda: tick)
    authenticate(f"Bearer {secret}")
    token.refresh_from_db()
    assert token.last_used_at == tick
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=tick - timedelta(minutes=1))
    authenticate(f"Bearer {secret}")  # exactly a minute: not yet stamped again
    token.refresh_from_db()
    assert token.last_used_at == tick - timedelta(minutes=1)


def test_a_read_without_an_actor_is_the_owners(make_note) -> None:
    from memory.read import read

    node = make_note("The heron nests by the weir.")
    read(node.pk)
    node.refresh_from_db()
    assert node.last_read_by == "owner"


def test_a_read_day_starts_at_midnight_utc_exactly(make_note, monkeypatch) -> None:
    from memory.read import read

    node = make_note("The heron nests by the weir.")
    # Midnight exactly, then mid-morning with a fraction of a second: one day.
    for clock in ((0, 0, 0, 0), (10, 20, 30, 500_000)):
        at = datetime(2026, 12, 1, *clock, tzinfo=UTC)
        monkeypatch.setattr("django.utils.timezone.now", lambda at=at: at)
        read(node.pk)
    node.refresh_from_db()
    assert (node.access_count, node.read_days) == (2, 1)


def test_a_reader_is_recorded_to_200_characters(make_note) -> None:
    from memory.read import read

    node = make_note("The heron nests by the weir.")
    read(node.pk, actor="r" * 201)
    node.refresh_from_db()
    assert node.last_read_by == "r" * 200


def test_a_read_as_of_an_instant_reports_the_trust_then(make_note) -> None:
    from memory.read import read

    node = make_note("The garden needs water.")
    proposed = propose(node.pk, actor="agent:scout")
    root_as_owner(node)
    assert read(node.pk)["trust"] == "ground"
    assert read(node.pk, as_of=proposed.at)["trust"] == "proposed"
