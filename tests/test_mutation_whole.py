"""Behaviours that round 4's whole-module, one-child mutation run showed no test pinned (issue 16,
docs/mutation.md "Round 4"): tokens, trust, authority, read, write; the agents' door is in
tests/test_mutation_doors.py. Each test is named for the behaviour, not the mutant. Unit level:
the engine functions themselves, no browser and no worker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.authority import authority_report, walk_back
from memory.errors import Conflict, Invalid, NotFound
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
from tests._helpers.acts import root_as_owner


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


def test_with_trust_annotates_every_node_when_given_no_queryset(make_note) -> None:
    node = make_note("The garden needs water.")
    seal(node.pk, owner="owner")
    trusts = dict(with_trust().values_list("pk", "trust"))
    assert trusts[node.pk] == "sealed"
    assert len(trusts) == Node.objects.count()


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
    from memory.forgetting import let_go

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
