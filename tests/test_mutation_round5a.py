"""Behaviours that round 5's whole-module, one-child mutation run of memory.write, memory.trust,
memory.sleep.promote and memory.visibility showed no test pinned (issue 16, docs/mutation.md
"Round 5"). Each test is named for the behaviour, not the mutant; unit level, real SQLite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memory.errors import Conflict, GroveError, Invalid, NotFound, TooLarge
from memory.forgetting import let_go, restore
from memory.models import Edge, Event, Kind, Node
from memory.sleep.decay import decay
from memory.sleep.promote import promotion_threshold
from memory.tokens import create_token
from memory.trust import trust_map
from memory.visibility import MAX_ID, lawful_trust, live_at, node_in_domains, visible_ids
from memory.write import ScrollPointer, write_node
from review.ceremony import reject, seal


def _copy_at(node: Node, pk: int) -> Node:
    """A copy of a node stored at an id of our choosing (the write path always takes the next).
    Made last in a test: after the top id SQLite's AUTOINCREMENT has no next id."""
    fields = {f.attname: getattr(node, f.attname) for f in Node._meta.concrete_fields}
    copy = Node(**{**fields, "id": pk})
    copy.save(force_insert=True)
    return copy


def test_the_highest_id_sqlite_holds_still_names_a_node(make_note) -> None:
    top = _copy_at(make_note("Stored at the very top of the id range."), MAX_ID)
    assert visible_ids([MAX_ID], domains=None) == {MAX_ID}
    assert node_in_domains(MAX_ID).pk == top.pk


def test_an_id_below_one_names_no_node_even_one_stored_there(make_note) -> None:
    _copy_at(make_note("Stored at id zero by hand."), 0)
    assert visible_ids([0], domains=None) == set()
    with pytest.raises(NotFound):
        node_in_domains(0)


def _note(**fields) -> Node:
    base = {"body": "A plain note.", "kind": "note", "jurisdiction": "home", "signature": "owner"}
    return write_node(**{**base, **fields}).node


def _refusal(error: type[GroveError], **fields) -> tuple[str, str]:
    with pytest.raises(error) as refused:
        _note(**fields)
    return refused.value.code, refused.value.message


def test_a_source_or_signature_over_its_limit_is_refused_naming_it_and_the_limit(
    root_note, settings
) -> None:
    settings.GROVE_MAX_SOURCE_CHARS = settings.GROVE_MAX_SIGNATURE_CHARS = 10
    origins = [{"id": root_note.pk}]
    assert _note(source="s" * 10, signature="n" * 10, origins=origins).source == "s" * 10
    for field in ("source", "signature"):
        assert _refusal(TooLarge, origins=origins, **{field: "x" * 11}) == (
            "too_large",
            f"{field} has 11 characters; the limit is 10",
        )


def test_a_body_of_exactly_the_limit_arrives_and_a_longer_one_is_refused_in_words(
    root_note, settings
) -> None:
    settings.GROVE_MAX_BODY_CHARS = 40
    origins = [{"id": root_note.pk}]
    assert _note(body="b" * 40, origins=origins).body == "b" * 40
    assert _refusal(TooLarge, body="b" * 41, origins=origins) == (
        "too_large",
        "body has 41 characters; the limit is 40",
    )


def test_an_actor_as_wide_as_its_column_is_kept_and_a_wider_one_refused_in_words(
    root_note,
) -> None:
    width = Event._meta.get_field("actor").max_length
    origins = [{"id": root_note.pk}]
    node = _note(actor="a" * width, origins=origins)
    assert Event.objects.get(node=node, kind="arrived").actor == "a" * width
    for actor in ("a" * (width + 1), 42):
        assert _refusal(Invalid, actor=actor, origins=origins) == (
            "bad_actor",
            f"actor must be text of at most {width} characters",
        )


def test_a_body_or_source_that_is_not_text_is_refused_in_words(root_note) -> None:
    origins = [{"id": root_note.pk}]
    for fields in ({"body": 7}, {"source": None}):
        assert _refusal(Invalid, origins=origins, **fields) == (
            "bad_body",
            "body and source must be text",
        )


def test_an_unsigned_write_is_refused_in_words(root_note) -> None:
    assert _refusal(Invalid, signature="  ", origins=[{"id": root_note.pk}]) == (
        "unsigned",
        "signature is required: say who wrote this",
    )


def test_a_body_of_scaffolding_only_is_refused_by_code_and_words(root_note) -> None:
    assert _refusal(Invalid, body="<think>nothing</think>", origins=[{"id": root_note.pk}]) == (
        "empty_body",
        "body is empty once transport scaffolding is removed",
    )


def test_a_nests_origin_is_refused_for_extract_makes_those(root_note) -> None:
    assert _refusal(Invalid, origins=[{"id": root_note.pk, "relation": "nests"}]) == (
        "bad_origin",
        "nests edges are made by extracting, not named",
    )


def test_an_unknown_kind_is_refused_listing_the_kinds_there_are(root_note) -> None:
    assert _refusal(Invalid, kind="memo", origins=[{"id": root_note.pk}]) == (
        "unknown_kind",
        f"unknown kind 'memo'; expected one of: {', '.join(Kind.values)}",
    )


def test_an_unknown_origin_is_named_in_the_refusal(db) -> None:
    assert _refusal(Invalid, origins=[{"id": 987654}]) == (
        "unknown_origin",
        "unknown origin node(s): [987654]",
    )


def test_a_decayed_origin_is_named_and_the_writer_told_to_restore_it(stale_note) -> None:
    decay()
    assert _refusal(Conflict, origins=[{"id": stale_note.pk}]) == (
        "decayed_origin",
        f"origin node(s) [{stale_note.pk}] have decayed; restore them first",
    )


def test_a_write_without_source_or_domain_has_no_source_in_the_personal_domain(
    root_note,
) -> None:
    node = _note(origins=[{"id": root_note.pk}])
    node.refresh_from_db()
    assert (node.source, node.domain) == ("", "personal")


def test_a_rearrival_is_refused_on_the_latest_rejection_of_its_words(root_note) -> None:
    origins = [{"id": root_note.pk}]
    first = _note(body="The well is dry.", origins=origins)
    later = _note(body="The well is dry.", jurisdiction="wild", origins=origins)
    assert first.pk != later.pk  # another jurisdiction: not a duplicate
    reject(first.pk, owner="owner", reason="false")
    reject(later.pk, owner="owner", reason="false again")
    assert _refusal(Conflict, body="The well is dry.", origins=origins)[0] == "tombstoned"
    refused = Event.objects.filter(kind="rearrival_refused").values_list("node_id", flat=True)
    assert list(refused) == [later.pk]
    assert _note(body="The well is full.", origins=origins).body == "The well is full."


def test_a_constraint_the_database_refuses_is_reported_as_its_refusal(db) -> None:
    pointer = ScrollPointer(path="talk.jsonl", offset=0, hash="not-hex")
    code, message = _refusal(Invalid, kind="pair", scroll=pointer)
    assert code == "constraint" and message.startswith("refused by the database: ")


def test_a_pair_whose_scroll_pointer_lacks_a_part_is_refused(db) -> None:
    digest = "ab" * 32
    for pointer in (
        ScrollPointer(path="", offset=0, hash=digest),
        ScrollPointer(path="talk.jsonl", offset=0, hash=""),
        ScrollPointer(path="talk.jsonl", offset=None, hash=digest),  # type: ignore[arg-type]
    ):
        assert _refusal(Invalid, kind="pair", scroll=pointer)[0] == "no_scroll"


def test_an_occurrence_is_neither_refused_by_a_tombstone_nor_merged(make_note) -> None:
    reject(make_note("The ferry runs at noon.").pk, owner="owner", reason="it does not")
    imported = {"kind": "import", "jurisdiction": "wild", "source": "timetable.md"}
    first = write_node(body="The ferry runs at noon.", signature="importer", **imported)
    second = write_node(body="The ferry runs at noon.", signature="importer", **imported)
    assert (first.status, second.status) == ("created", "created")
    assert first.node.pk != second.node.pk


def test_a_rejection_refuses_its_words_only_in_its_own_domain(make_note, root_note) -> None:
    reject(make_note("The ferry runs at noon.").pk, owner="owner", reason="it does not")
    elsewhere = _note(body="The ferry runs at noon.", domain="work", origins=[{"id": root_note.pk}])
    assert elsewhere.domain == "work"


def test_the_same_words_in_another_kind_or_domain_are_another_node(make_note) -> None:
    note = make_note("The bell rings twice.")
    journal = make_note("The bell rings twice.", kind="journal")
    work = make_note("The bell rings twice.", domain="work")
    assert len({note.pk, journal.pk, work.pk}) == 3


def test_a_duplicate_records_its_new_origins_as_a_duplicate_rearrival(make_note) -> None:
    node = make_note("The weir was rebuilt in 1911.")
    other = make_note("The parish record.")
    again = make_note("The weir was rebuilt in 1911.", origins=[{"id": other.pk}], actor="ann")
    assert (again.pk, Node.objects.count()) == (node.pk, 3)
    (event,) = Event.objects.filter(node=node, kind="rearrived")
    assert (event.actor, event.reason) == ("ann", "duplicate")
    assert event.detail == {
        "signature": "owner",
        "token": None,
        "origins": [[other.pk, "derived_from"]],
    }


def test_a_revival_counts_one_read_now_and_records_the_origins_it_brought(make_note) -> None:
    node = make_note("Forgotten, then written again.")
    other = make_note("A new reason to remember it.")
    let_go(node.pk, actor="owner")
    before = timezone.now()
    again = make_note(node.body, origins=[{"id": other.pk}])
    assert again.pk == node.pk and again.decayed_at is None
    assert again.access_count == node.access_count + 1
    assert again.last_accessed_at is not None and again.last_accessed_at >= before
    event = Event.objects.get(node=node, kind="revived")
    assert event.detail == {
        "signature": "owner",
        "token": None,
        "origins": [[other.pk, "derived_from"]],
    }


def test_a_write_keeps_the_source_and_the_referent_time_it_names(root_note) -> None:
    node = _note(
        source="diary.md", referent_time="2020-01-02T03:04:05Z", origins=[{"id": root_note.pk}]
    )
    node.refresh_from_db()
    assert node.source == "diary.md"
    assert node.referent_time == datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_the_promotion_threshold_ignores_the_reads_of_decayed_nodes(make_note) -> None:
    live, gone = make_note("Read four times."), make_note("Read fifty times, then let go.")
    Node.objects.filter(pk=live.pk).update(access_count=4)
    Node.objects.filter(pk=gone.pk).update(access_count=50)
    let_go(gone.pk, actor="owner")
    assert promotion_threshold() == 4


# Ids no test node reaches: 1,799 of them put the next id past the first two chunks of 900,
# where a chunk loop stepping by one (start 0 to 899) no longer reaches.
FAR = [10**9 + i for i in range(1799)]


def test_liveness_trust_and_hiding_are_answered_past_two_chunks_of_ids(make_note) -> None:
    live, sealed = make_note("Live, the 1,800th id asked for."), make_note("Sealed, the last.")
    seal(sealed.pk, owner="owner")
    later = datetime.now(UTC) + timedelta(days=1)
    for as_of in (None, later):
        assert live_at([*FAR, live.pk], as_of=as_of) == {live.pk}
        assert sealed.pk not in lawful_trust(
            [*FAR, sealed.pk], as_of=as_of, include_superseded=True
        )
    assert trust_map([*FAR, sealed.pk])[sealed.pk] == "sealed"


def test_an_edge_records_the_actor_who_wrote_it(root_note) -> None:
    node = _note(origins=[{"id": root_note.pk, "relation": "cites"}], actor="ann")
    edge = Edge.objects.get(from_node=node)
    assert (edge.to_node_id, edge.kind, edge.created_by) == (root_note.pk, "cites", "ann")


def test_an_arrival_records_its_key_and_origins_at_the_instant_the_node_was_created(
    root_note,
) -> None:
    then = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    node = _note(created_at=then, origins=[{"id": root_note.pk, "relation": "cites"}])
    arrived = Event.objects.get(node=node, kind="arrived")
    assert arrived.at == node.created_at == then
    assert arrived.detail == {
        "body_hash": node.body_hash,
        "content_key": node.content_key,
        "origins": [[root_note.pk, "cites"]],
        "signature": "owner",
        "token": None,
    }


def test_a_token_is_recorded_on_the_node_and_on_each_event_its_writes_make(make_note) -> None:
    token, _ = create_token(name="desk", domains=["personal"])
    other = make_note("Another origin.")
    node = make_note("Came through the desk.", token=token)
    assert Node.objects.get(pk=node.pk).token_id == token.pk
    make_note(node.body, origins=[{"id": other.pk}], token=token)  # a duplicate
    let_go(node.pk, actor="owner")
    make_note(node.body, token=token)  # a revival
    reject(node.pk, owner="owner", reason="false")
    with pytest.raises(Conflict):
        make_note(node.body, token=token)
    kinds = ("arrived", "rearrived", "revived", "rearrival_refused")
    events = Event.objects.filter(node=node, kind__in=kinds)
    assert sorted(events.values_list("kind", "token_id")) == sorted((k, token.pk) for k in kinds)


def test_a_refused_rearrival_records_why_and_what_it_carried(make_note) -> None:
    node = make_note("The moon is made of cheese.")
    reject(node.pk, owner="owner", reason="false")
    with pytest.raises(Conflict):
        make_note(node.body, signature="ann")
    refused = Event.objects.get(node=node, kind="rearrival_refused")
    assert (refused.actor, refused.reason) == ("ann", "tombstoned")
    assert refused.detail == {"body_hash": node.body_hash, "signature": "ann", "token": None}


def test_a_node_restored_after_its_decay_was_live_as_of_an_instant_after(make_note) -> None:
    node = make_note("Let go, then brought back.")
    let_go(node.pk, actor="owner")
    restore(node.pk, actor="owner")
    later = datetime.now(UTC) + timedelta(seconds=1)
    assert live_at([node.pk], as_of=later) == {node.pk}


def test_trust_is_answered_for_exactly_the_ids_asked(make_note) -> None:
    asked, other = make_note("Asked about."), make_note("Sealed, not asked about.")
    seal(other.pk, owner="owner")
    assert trust_map([asked.pk]) == {asked.pk: "unreviewed"}
