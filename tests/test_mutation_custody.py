"""Custody and visibility behaviours that a one-child mutation run showed no test pinned (issue 16,
docs/mutation.md "Round 3, custody modules"). Each test is named for the behaviour it holds.
Unit level on purpose: the engine functions themselves, no browser and no worker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection

from memory.errors import Invalid, NotFound
from memory.models import Node
from memory.visibility import (
    Visibility,
    lawful,
    lawful_trust,
    live_at,
    node_in_domains,
)
from review.ceremony import seal

# Ids no test node reaches: padding that fills a chunk of 900 without naming a node.
PADDING = [10**9 + i for i in range(899)]


def _vis(**kw) -> Visibility:
    return Visibility.of(
        domains=kw.get("domains"), scope=kw.get("scope", "both"), as_of=kw.get("as_of")
    )


def test_an_unknown_scope_is_refused_naming_the_scopes_there_are() -> None:
    with pytest.raises(Invalid) as refused:
        Visibility.of(domains=None, scope="garden", as_of=None)
    assert refused.value.code == "bad_scope"
    assert refused.value.message == "unknown scope 'garden'; expected one of: home, wild, both"


def test_a_bad_as_of_is_refused_by_its_field_name() -> None:
    with pytest.raises(Invalid) as refused:
        Visibility.of(domains=None, scope="both", as_of="yesterday-ish")
    assert refused.value.message.startswith("as_of ")


def test_a_single_domain_may_be_named_as_text_and_repeats_count_once() -> None:
    assert _vis(domains="work").domains == ("work",)
    assert _vis(domains=["work", "home", "work"]).domains == ("work", "home")


def test_no_domains_at_all_sees_nothing_where_none_sees_everything(make_note) -> None:
    node = make_note("Seen by the owner, by no caller of no domain.")
    assert node.pk in lawful([node.pk], _vis(domains=None))
    assert lawful([node.pk], _vis(domains=[])) == {}


def test_the_default_alias_names_the_node_table_n(make_note) -> None:
    node = make_note("Found through the default alias.", domain="work")
    where, params = _vis(domains=["work"], scope="home").sql()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT n.id FROM memory_node n WHERE {where}", params)
        found = {row[0] for row in cursor.fetchall()}
    assert node.pk in found


def test_the_vector_mask_keeps_domain_scope_and_as_of_together() -> None:
    then = datetime(2026, 1, 2, tzinfo=UTC)
    t = then.timestamp()
    rows = {  # domain code, wild, created
        "domain": np.array([0, 1, 0, 0, 2]),
        "wild": np.array([False, False, True, False, False]),
        "created": np.array([t, t, t, t + 1, t - 5]),
    }
    codes = {"work": 0, "personal": 1, "other": 2}
    assert _vis().row_mask(codes=codes, **rows) is None
    home_work = _vis(domains=["work", "gone"], scope="home", as_of=then).row_mask(
        codes=codes, **rows
    )
    # Created exactly at as_of counts as existing then; a second later does not.
    assert home_work.tolist() == [True, False, False, False, False]
    wild = _vis(scope="wild").row_mask(codes=codes, **rows)
    assert wild.tolist() == [False, False, True, False, False]
    home_then = _vis(scope="home", as_of=then).row_mask(codes=codes, **rows)
    assert home_then.tolist() == [True, True, False, False, True]
    only_then = _vis(as_of=then).row_mask(codes=codes, **rows)
    assert only_then.tolist() == [True, True, True, False, True]
    mine_then = _vis(domains=["personal", "other"], as_of=then).row_mask(codes=codes, **rows)
    assert mine_then.tolist() == [False, True, False, False, True]


def test_liveness_is_answered_past_the_first_chunk_of_ids(make_note) -> None:
    first, last = make_note("First of the many ids."), make_note("Last of the many ids.")
    ids = [first.pk, *PADDING, last.pk]  # `last` opens the second chunk of 900
    assert live_at(ids, as_of=None) == {first.pk, last.pk}
    later = datetime.now(UTC) + timedelta(days=1)
    assert live_at(ids, as_of=later) == {first.pk, last.pk}


def test_a_decay_flag_at_the_very_instant_means_gone_then(make_note) -> None:
    node = make_note("Flagged without an event, as raw fixtures may do.")
    at = datetime(2026, 3, 1, 12, tzinfo=UTC)
    Node.objects.filter(pk=node.pk).update(decayed_at=at)
    assert live_at([node.pk], as_of=at) == set()
    assert live_at([node.pk], as_of=at - timedelta(microseconds=1)) == {node.pk}


def test_sealed_nodes_are_hidden_past_the_first_chunk_of_ids(make_note) -> None:
    first, last = make_note("Sealed first."), make_note("Sealed last.")
    for node in (first, last):
        seal(node.pk, owner="owner")
    ids = [first.pk, *PADDING, last.pk]
    for as_of in (None, datetime.now(UTC) + timedelta(days=1)):
        shown = lawful_trust(ids, as_of=as_of, include_superseded=True)
        assert first.pk not in shown and last.pk not in shown
        assert len(shown) == len(PADDING)  # the padding is unreviewed: the filter kept it


def test_node_in_domains_answers_missing_ids_alike(make_note) -> None:
    node = make_note("The first note of some domain.")
    assert node_in_domains(node.pk).pk == node.pk
    assert node_in_domains(str(node.pk), domains=["personal"]).pk == node.pk
    for bad, message in (
        ("0", "node '0' not found"),
        ("nine", "node 'nine' not found"),
        (2**63, f"node {2**63} not found"),
        (node.pk + 1000, f"node {node.pk + 1000} not found"),
    ):
        with pytest.raises(NotFound) as missing:
            node_in_domains(bad)
        assert missing.value.message == message
    with pytest.raises(NotFound) as outside:
        node_in_domains(node.pk, domains=["work"])
    assert outside.value.message == f"node {node.pk} not found"


def test_visible_node_refuses_each_rule_with_the_one_answer(make_note) -> None:
    from memory.forgetting import let_go
    from memory.read import visible_node
    from review.ceremony import reject
    from tests._helpers.acts import root_as_owner, supersede_as_owner

    def refused(node_id, **kw) -> bool:
        superseded = kw.pop("include_superseded", True)
        try:
            visible_node(node_id, vis=_vis(**kw), include_superseded=superseded)
        except NotFound as missing:
            assert missing.message == f"no node {node_id} here"
            return True
        return False

    node = make_note("Kept in the work domain, at home.", domain="work")
    made = node.created_at
    assert visible_node(node.pk, vis=_vis(domains=["work"], scope="home", as_of=made)) == (
        Node.objects.get(pk=node.pk),
        "unreviewed",
    )
    assert refused(node.pk, domains=["personal"])
    assert refused(node.pk, scope="wild")
    assert not refused(node.pk, scope="home")
    assert refused(node.pk, as_of=made - timedelta(microseconds=1))
    assert refused("not a number") and refused(node.pk + 1000)

    old = make_note("Replaced later by better words.")
    root_as_owner(old)
    supersede_as_owner(old, "Better words, now ground.")
    assert not refused(old.pk)
    assert refused(old.pk, include_superseded=False)

    gone = make_note("Let go by the owner.")
    let_go(gone.pk, actor="owner")
    assert refused(gone.pk) and refused(gone.pk, as_of=datetime.now(UTC) + timedelta(days=1))
    assert not refused(gone.pk, as_of=gone.created_at)  # it was live then

    for hide in (seal, lambda pk, owner: reject(pk, owner=owner, reason="false")):
        hidden = make_note(f"Hidden by the owner ({id(hide)}).")
        hide(hidden.pk, owner="owner")
        assert refused(hidden.pk) and refused(hidden.pk, as_of=hidden.created_at)


def test_trust_is_derived_past_the_first_chunk_of_ids(make_note) -> None:
    from memory.trust import trust_map

    first, last = make_note("Sealed, first of many."), make_note("Sealed, last of many.")
    for node in (first, last):
        seal(node.pk, owner="owner")
    trusts = trust_map([first.pk, *PADDING, last.pk])
    assert trusts[first.pk] == trusts[last.pk] == "sealed"
    assert trusts[PADDING[0]] == "unreviewed"


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


def test_walk_back_refuses_a_ground_node_outside_the_callers_domains(make_note) -> None:
    from memory.authority import walk_back
    from tests._helpers.acts import root_as_owner

    node = make_note("Ground in the work domain.", domain="work")
    root_as_owner(node)
    assert walk_back(node.pk, domains=["work"])["id"] == node.pk
    with pytest.raises(NotFound):
        walk_back(node.pk, domains=["personal"])


def test_a_walk_step_names_the_target_it_refuses(make_note) -> None:
    from agents.operations import walk
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal"])
    node = make_note("Where the walk starts.")
    ticket = walk(token, "open", {"node_id": node.pk})["ticket"]
    with pytest.raises(Invalid) as refused:
        walk(token, "step", {"ticket": ticket, "direction": "origins", "target": "north"})
    assert refused.value.message == "target must be an integer"


def test_the_authority_report_names_every_field_and_only_its_own_events(make_note) -> None:
    from memory.authority import authority_report
    from memory.models import Event
    from tests._helpers.acts import root_as_owner

    origin = make_note("Where the fuse note came from.", source="fuses.md")
    node = make_note("The spare fuses are in the blue tin.", origins=[{"id": origin.pk}])
    root_as_owner(origin, "The origin holds.")  # another node's event, not in this report
    root_as_owner(node)
    rooted = Event.objects.get(node=node, kind="rooted")
    assert authority_report(node.pk) == {
        "jurisdiction": "home",
        "id": node.pk,
        "trust": "ground",
        "kind": "note",
        "excerpt": node.body,
        "source": "",
        "live": True,
        "domain": "personal",
        "signature": "owner",
        "body_hash": node.body_hash,
        "created_at": node.created_at.isoformat(),
        "referent_time": None,
        "decayed_at": None,
        "permanent": False,
        "permanent_at": None,
        "as_of": None,
        "events": [
            {
                "kind": "rooted",
                "at": rooted.at.isoformat(),
                "actor": "owner",
                "reason": rooted.reason,
                "related_node": None,
            }
        ],
        "origins": [
            {
                "relation": "derived_from",
                "jurisdiction": "home",
                "id": origin.pk,
                "trust": "ground",
                "kind": "note",
                "excerpt": origin.body,
                "source": "fuses.md",
                "live": True,
            }
        ],
    }
    then = rooted.at
    assert authority_report(node.pk, as_of=then)["as_of"] == then.isoformat()


def test_the_authority_report_as_of_judges_origins_then_for_owner_and_agent(make_note) -> None:
    from memory.authority import authority_report
    from memory.forgetting import let_go
    from tests._helpers.acts import root_as_owner

    origin = make_note("An origin rooted and let go later.")
    node = make_note("Derived before either.", origins=[{"id": origin.pk}])
    then = datetime.now(UTC)
    root_as_owner(origin)
    assert authority_report(node.pk)["origins"][0]["trust"] == "ground"
    assert authority_report(node.pk, as_of=then)["origins"][0]["trust"] == "unreviewed"
    late = make_note("Let go after the instant.")
    child = make_note("Cites what is let go later.", origins=[{"id": late.pk, "relation": "cites"}])
    then = datetime.now(UTC)
    let_go(late.pk, actor="owner")
    assert authority_report(child.pk, domains=["personal"])["origins"] == []
    (seen,) = authority_report(child.pk, domains=["personal"], as_of=then)["origins"]
    assert seen["id"] == late.pk


def test_the_authority_report_gives_decay_and_permanence_as_they_stand(make_note) -> None:
    from memory.authority import authority_report
    from memory.forgetting import let_go

    gone = make_note("Let go by the owner.")
    let_go(gone.pk, actor="owner")
    gone.refresh_from_db()
    report = authority_report(gone.pk)
    assert (report["live"], report["decayed_at"]) == (False, gone.decayed_at.isoformat())
    kept = make_note("Made permanent by reads.")
    at = datetime.now(UTC) - timedelta(seconds=5)
    Node.objects.filter(pk=kept.pk).update(permanent=True, permanent_at=at)
    assert authority_report(kept.pk, as_of=datetime.now(UTC))["permanent"] is True
    with pytest.raises(Invalid) as refused:
        authority_report(kept.pk, as_of="soonish")
    assert refused.value.message.startswith("as_of ")


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


def test_read_returns_every_field_by_name(make_note) -> None:
    from memory.read import read

    node = make_note("The boiler manual is in the hall drawer.", source="manual.md")
    Node.objects.filter(pk=node.pk).update(metadata={"room": "hall"})
    body = read(node.pk, actor="agent:desk")
    node.refresh_from_db()
    assert body == {
        "jurisdiction": "home",
        "id": node.pk,
        "trust": "unreviewed",
        "kind": "note",
        "body": node.body,
        "body_hash": node.body_hash,
        "source": "manual.md",
        "domain": "personal",
        "signature": "owner",
        "metadata": {"room": "hall"},
        "created_at": node.created_at.isoformat(),
        "referent_time": None,
        "event_time": node.event_time.isoformat(),
        "access_count": 1,
        "last_accessed_at": node.last_accessed_at.isoformat(),
        "permanent": False,
        "live": True,
    }


def test_a_read_day_is_a_utc_day_whatever_the_local_zone(make_note, settings) -> None:
    from memory.read import access_fields

    settings.TIME_ZONE = "Pacific/Kiritimati"  # UTC+14: its midnight is 10:00 UTC the day before
    node = make_note("Read late one UTC evening, and again the next UTC morning.")
    evening = datetime(2026, 11, 29, 20, tzinfo=UTC)
    Node.objects.filter(pk=node.pk).update(read_days=1, last_accessed_at=evening)
    Node.objects.filter(pk=node.pk).update(**access_fields(evening + timedelta(hours=9), "x"))
    assert Node.objects.get(pk=node.pk).read_days == 2  # a new UTC day, though not a local one


def test_a_bad_token_name_and_no_domain_are_refused_by_word_and_code(db) -> None:
    from memory.tokens import create_token

    with pytest.raises(Invalid) as refused:
        create_token(name="no spaces", domains=["personal"])
    assert refused.value.message == "token name must be 1-100 letters, digits, '.', '_' or '-'"
    with pytest.raises(Invalid) as bare:
        create_token(name="bare", domains=[])
    assert bare.value.code == "no_domain"


def test_trust_breaks_a_tie_of_instants_by_the_later_event(make_note, monkeypatch) -> None:
    from memory.trust import trust_map, with_trust
    from review.ceremony import unseal

    node = make_note("Sealed and unsealed within one tick of the clock.")
    tick = datetime.now(UTC)
    monkeypatch.setattr("django.utils.timezone.now", lambda: tick)
    seal(node.pk, owner="owner")
    unseal(node.pk, owner="owner")
    assert trust_map([node.pk])[node.pk] == "unreviewed"
    assert with_trust(Node.objects.filter(pk=node.pk)).get().trust == "unreviewed"


def test_a_revival_is_recorded_as_a_rearrival_read_by_its_actor(make_note, root_note) -> None:
    from memory.forgetting import let_go
    from memory.models import Event
    from memory.write import write_node

    node = make_note("Forgotten, then written again.")
    let_go(node.pk, actor="owner")
    widest = "agent:" + "x" * 194  # the actor column's full width, 200
    again = write_node(
        body=node.body,
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": root_note.pk}],
        actor=widest,
    )
    assert (again.status, again.node.pk) == ("revived", node.pk)
    assert again.node.last_read_by == widest
    assert Event.objects.get(node=node, kind="revived").reason == "rearrival"


def test_an_actor_wider_than_its_column_is_refused_and_nothing_stored(
    make_note, root_note, counts
) -> None:
    from memory.errors import Invalid
    from memory.write import write_node

    before = counts()
    with pytest.raises(Invalid) as refused:
        write_node(
            body="A note from an actor with a very long name.",
            kind="note",
            jurisdiction="home",
            signature="owner",
            origins=[{"id": root_note.pk}],
            actor="agent:" + "x" * 195,
        )
    assert refused.value.code == "bad_actor"
    assert counts() == before


def test_an_arrival_records_its_hash_and_the_token_it_came_through(root_note, counts) -> None:
    from memory.models import Event
    from memory.tokens import create_token
    from memory.write import ScrollPointer, write_node

    token, _ = create_token(name="desk", domains=["personal"])
    node = write_node(
        body="Written through the desk token.",
        kind="note",
        jurisdiction="home",
        signature="desk",
        origins=[{"id": root_note.pk}],
        token=token,
    ).node
    detail = Event.objects.get(node=node, kind="arrived").detail
    assert (detail["body_hash"], detail["token"]) == (node.body_hash, "desk")
    before = counts()
    with pytest.raises(Invalid) as refused:  # a scroll hash the database's CHECK refuses
        write_node(
            body="A pair whose scroll hash is not hex.",
            kind="pair",
            jurisdiction="home",
            signature="owner",
            scroll=ScrollPointer(path="talk.jsonl", offset=0, hash="not-hex"),
        )
    assert refused.value.code == "constraint" and counts() == before


def test_an_origin_without_an_id_is_refused_by_word_and_code(root_note) -> None:
    from memory.write import write_node

    for origin in ({"relation": "cites"}, "not a mapping"):
        with pytest.raises(Invalid) as refused:
            write_node(
                body="Came from somewhere unnamed.",
                kind="note",
                jurisdiction="home",
                signature="owner",
                origins=[origin],
            )
        assert (refused.value.code, refused.value.message) == (
            "bad_origin",
            "each origin needs an id and a relation",
        )


def test_the_write_path_refuses_in_its_own_words(db) -> None:
    from memory.write import write_node

    base = {"body": "Words.", "kind": "note", "jurisdiction": "home", "signature": "owner"}
    for fields, code, message in (
        ({"domain": " "}, "bad_domain", "domain must be a non-empty label"),
        ({"kind": "pair"}, "no_scroll", "a pair needs a scroll pointer (path, offset, hash)"),
        ({}, "no_origin", "a note needs at least one origin: say what it came from"),
        (
            {"kind": "import"},
            "no_origin",
            "a import needs at least one origin: say what it came from (or name its source)",
        ),
    ):
        with pytest.raises(Invalid) as refused:
            write_node(**{**base, **fields})
        assert (refused.value.code, refused.value.message) == (code, message)


def test_an_origin_id_that_is_not_a_number_is_named_in_the_refusal(db) -> None:
    from memory.write import write_node

    with pytest.raises(Invalid) as refused:
        write_node(
            body="Came from node seven.",
            kind="note",
            jurisdiction="home",
            signature="owner",
            origins=[{"id": "seven"}],
        )
    assert (refused.value.code, refused.value.message) == (
        "bad_origin",
        "origin id 'seven' is not a node id",
    )
