"""Behaviours no test pinned until mutation testing showed a mutant surviving them (issue 16,
docs/mutation.md). Each test is named for the behaviour, not the mutant."""

from __future__ import annotations

import pytest

from memory.errors import Invalid
from memory.recall import recall


def test_recall_names_the_bad_scope_and_the_bad_as_of_in_its_refusals(db) -> None:
    with pytest.raises(Invalid) as scope:
        recall("boiler", scope="everywhere")
    assert scope.value.code == "bad_scope"
    with pytest.raises(Invalid) as when:
        recall("boiler", as_of="last tuesday")
    assert when.value.code == "bad_datetime" and when.value.message.startswith("as_of ")


def test_an_active_token_is_found_by_name_until_it_is_revoked(db) -> None:
    from memory.errors import NotFound
    from memory.tokens import Unauthorized, active_token, create_token, revoke_token

    token, _ = create_token(name="desk", domains=["personal"])
    assert active_token(name="desk").pk == token.pk
    revoke_token(name="desk")
    with pytest.raises(Unauthorized):
        active_token(name="desk")
    with pytest.raises(NotFound) as unknown:
        revoke_token(name="nobody")
    assert "nobody" in unknown.value.message


def test_a_decay_between_the_check_and_the_count_answers_like_a_missing_node(
    make_note, monkeypatch
) -> None:
    import memory.read as read_module
    from memory.errors import NotFound
    from memory.forgetting import let_go

    node = make_note("Read while the sleep lets it go.")
    check = read_module.visible_node

    def check_then_decay(node_id, **kwargs):
        seen = check(node_id, **kwargs)
        let_go(node.pk, actor="owner")  # committed after the check, before the count
        return seen

    monkeypatch.setattr(read_module, "visible_node", check_then_decay)
    with pytest.raises(NotFound) as raced:
        read_module.read(node.pk)
    assert raced.value.message == f"no node {node.pk} here"


def test_walk_back_reports_the_adoption_and_only_the_callers_origins(make_note, root_note) -> None:
    from memory.authority import walk_back
    from memory.errors import Conflict
    from tests._helpers.acts import root_as_owner, supersede_as_owner

    memo = make_note("A work memo on the boiler contract.", domain="work")
    old = make_note(
        "The boiler is serviced in May.",
        origins=[{"id": root_note.pk}, {"id": memo.pk, "relation": "cites"}],
    )
    with pytest.raises(Conflict) as unrooted:
        walk_back(old.pk)
    assert unrooted.value.code == "not_ground"
    root_as_owner(old)
    origins = [o["id"] for o in walk_back(old.pk)["origins"]]
    assert memo.pk in origins
    assert memo.pk not in [o["id"] for o in walk_back(old.pk, domains=["personal"])["origins"]]
    new = supersede_as_owner(old, "The boiler is serviced in June.")
    back = walk_back(new.pk)
    assert back["body_hash"] == new.body_hash and back["scroll"] is None
    assert back["adoption"]["actor"] == "owner" and back["adoption"]["supersedes"] == old.pk


def test_authority_and_read_report_every_field_by_its_documented_name(make_note) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from memory.authority import authority_report
    from memory.models import Node
    from memory.read import read

    node = make_note("The gutter was cleared.", referent_time="2024-05-08T13:56:00+00:00")
    report = authority_report(node.pk, as_of=node.created_at)  # the instant it was written
    assert {"kind", "referent_time", "permanent_at", "events"} <= set(report)
    assert report["kind"] == "note" and report["referent_time"].startswith("2024-05-08T13:56")
    assert report["jurisdiction"] == "home"
    body = read(node.pk)
    assert (body["kind"], body["live"]) == ("note", True)
    assert body["referent_time"].startswith("2024-05-08T13:56")
    later = timezone.now() + timedelta(seconds=1)
    Node.objects.filter(pk=node.pk).update(permanent=True, permanent_at=later)
    assert authority_report(node.pk)["permanent_at"] is not None
    assert authority_report(node.pk, as_of=timezone.now())["permanent"] is False


def test_an_authority_event_names_its_related_node(make_note) -> None:
    from memory.authority import authority_report
    from tests._helpers.acts import root_as_owner, supersede_as_owner

    old = make_note("The gate code is 1234.")
    root_as_owner(old)
    new = supersede_as_owner(old, "The gate code is 4321.")
    events = authority_report(old.pk)["events"]
    assert [e["related_node"] for e in events if e["kind"] == "superseded"] == [new.pk]


def test_a_similar_edge_is_not_an_origin(make_note, root_note) -> None:
    from memory.authority import authority_report
    from memory.models import Edge

    alike = make_note("The gutter was cleared in spring.")
    node = make_note(
        "The gutter was cleared.",
        origins=[{"id": root_note.pk}, {"id": alike.pk, "relation": "similar"}],
    )
    assert Edge.objects.filter(from_node=node, to_node=alike, kind="similar").exists()
    assert [o["id"] for o in authority_report(node.pk)["origins"]] == [root_note.pk]


def test_token_refusals_carry_their_codes_and_say_what_to_send(db) -> None:
    from memory.tokens import Unauthorized, authenticate, create_token

    create_token(name="desk", domains=["personal"])
    with pytest.raises(Invalid) as taken:
        create_token(name="desk", domains=["personal"])
    assert taken.value.code == "token_exists"
    with pytest.raises(Invalid) as bad:
        create_token(name="desk2", domains=["not a label!"])
    assert bad.value.code == "bad_domain"
    with pytest.raises(Unauthorized) as missing:
        authenticate(None)
    assert missing.value.message == "send 'Authorization: Bearer <token>'"


def test_read_refusals_name_the_id_asked_for(make_note) -> None:
    from memory.errors import NotFound
    from memory.read import read

    node = make_note("A work memo.", domain="work")
    with pytest.raises(NotFound) as hidden:
        read(node.pk, domains=["personal"])
    assert hidden.value.message == f"no node {node.pk} here"
    with pytest.raises(NotFound) as garbled:
        read("twelve")  # type: ignore[arg-type]
    assert garbled.value.message == "no node twelve here"


def test_context_items_carry_the_packets_fields_and_honour_scope_and_limit(make_note) -> None:
    from agents.operations import context
    from memory.tokens import create_token

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
    from memory.errors import NotFound
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal"])
    make_note("The heron nests by the weir.")

    def sealed_meanwhile(*args, **kwargs):
        raise NotFound("no node here")

    assert len(operations.context(token, q="heron weir")["items"]) == 1
    monkeypatch.setattr(operations, "read_node", sealed_meanwhile)
    found = operations.context(token, q="heron weir")
    assert (found["items"], found["skipped"], found["used"]) == ([], 1, 0)


def test_a_refused_rearrival_records_the_token_and_the_hash_it_carried(make_note) -> None:
    from memory.errors import Conflict
    from memory.models import Event, EventKind
    from memory.tokens import create_token
    from review.ceremony import reject

    token, _ = create_token(name="desk", domains=["personal"])
    node = make_note("The heron is a kingfisher.")
    reject(node.pk, owner="owner", reason="wrong bird")
    with pytest.raises(Conflict):
        make_note("The heron is a kingfisher.", token=token, signature="desk")
    refused = Event.objects.get(node=node, kind=EventKind.REARRIVAL_REFUSED)
    assert refused.token_id == token.pk and refused.detail["body_hash"] == node.body_hash


def test_an_agents_proposal_keeps_its_reason_and_refuses_one_that_is_not_text(make_note) -> None:
    from agents.operations import propose
    from memory.models import Event, EventKind
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal"])
    node = make_note("The weir was rebuilt in 1911.")
    with pytest.raises(Invalid) as refused:
        propose(token, node.pk, {"reason": 42})
    assert refused.value.code == "bad_field"
    propose(token, node.pk, {"reason": "the parish record says so"})
    (event,) = Event.objects.filter(node=node, kind=EventKind.PROPOSED)
    assert "parish record" in event.reason + str(event.detail)


def test_a_duplicate_records_only_origins_the_node_lacks(make_note, root_note) -> None:
    from memory.models import Event, EventKind

    node = make_note("The weir was rebuilt in 1911.")
    other = make_note("The parish record.")
    make_note("The weir was rebuilt in 1911.")  # same origin: nothing new to record
    make_note("The weir was rebuilt in 1911.", origins=[{"id": node.pk}])  # itself: not an origin
    assert not Event.objects.filter(node=node, kind=EventKind.REARRIVED).exists()
    make_note("The weir was rebuilt in 1911.", origins=[{"id": other.pk}])
    (event,) = Event.objects.filter(node=node, kind=EventKind.REARRIVED)
    assert event.detail["origins"] == [[other.pk, "derived_from"]]


def test_the_agents_door_refuses_origins_that_are_not_a_list_and_signs_turns(db, settings) -> None:
    from agents.operations import commit_turn, remember
    from memory.models import Node
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal"])
    note = {"body": "x", "kind": "note", "jurisdiction": "home", "origins": "12"}
    with pytest.raises(Invalid) as refused:
        remember(token, note)
    assert refused.value.code == "bad_origin"
    turn = {"conversation": "c1", "user": "hi", "assistant": "hello", "signature": "scout-v2"}
    _, written = commit_turn(token, turn)
    assert Node.objects.get(pk=written["id"]).signature == "scout-v2"


def test_a_note_remembered_by_an_agent_is_recorded_as_the_agents_arrival(root_note) -> None:
    from agents.operations import remember
    from memory.models import Event, EventKind, Node
    from memory.tokens import create_token

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
    from agents.operations import walk
    from memory.errors import NotFound
    from memory.tokens import create_token

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

    from agents.operations import authority, recall_packets, walk
    from memory.errors import NotFound
    from memory.forgetting import let_go, restore
    from memory.tokens import create_token

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
    from agents.operations import recall_packets
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal"])
    for i in range(12):
        make_note(f"Heron sighting number {i} by the weir.")
    assert len(recall_packets(token, q="heron sighting")["results"]) == 10
    assert len(recall_packets(token, q="heron sighting", limit=12)["results"]) == 12


def test_recall_as_of_reports_trust_as_it_stood_then(make_note) -> None:
    from django.utils import timezone

    from tests._helpers.acts import root_as_owner, supersede_as_owner

    node = make_note("The heron nests by the weir.")
    root_as_owner(node)
    while_ground = timezone.now().isoformat()
    supersede_as_owner(node, "The heron nests by the mill.")
    assert node.pk not in [p["id"] for p in recall("heron weir")]
    then = {p["id"]: p["trust"] for p in recall("heron weir", as_of=while_ground)}
    assert then[node.pk] == "ground"


def test_a_duplicate_through_a_token_records_the_token(make_note, root_note) -> None:
    from memory.models import Event, EventKind
    from memory.tokens import create_token

    token, _ = create_token(name="desk", domains=["personal"])
    node = make_note("The weir was rebuilt in 1911.")
    other = make_note("The parish record.")
    make_note("The weir was rebuilt in 1911.", origins=[{"id": other.pk}], token=token)
    (event,) = Event.objects.filter(node=node, kind=EventKind.REARRIVED)
    assert event.token_id == token.pk


def test_a_query_that_is_not_text_recalls_nothing_and_is_logged_empty(db) -> None:
    from memory.models import RecallLog

    assert recall(None) == [] and recall(42) == []  # type: ignore[arg-type]
    assert list(RecallLog.objects.values_list("query", flat=True)) == ["", ""]


def test_recall_scores_keep_their_fraction(make_note) -> None:
    make_note("Heron, heron by the pond.")
    make_note("A heron once, among many other birds seen at the lake that day.")
    scores = [p["score"] for p in recall("heron")]
    assert len(scores) == 2 and 0 < scores[1] < scores[0]
    assert scores[1] != round(scores[1]) and scores[1] == round(scores[1], 6)


def test_proposing_a_decayed_node_is_refused_by_its_code(make_note) -> None:
    from memory.errors import Conflict
    from memory.forgetting import let_go
    from review.ceremony import propose

    node = make_note("Let go before anyone proposed it.")
    let_go(node.pk, actor="owner")
    with pytest.raises(Conflict) as refused:
        propose(node.pk, actor="agent:scout")
    assert refused.value.code == "decayed"


def test_a_long_body_is_previewed_cut_with_an_ellipsis(make_note) -> None:
    from memory.packets import EXCERPT_CHARS

    make_note("heron " * 60)  # 360 characters
    (packet,) = recall("heron")
    assert len(packet["excerpt"]) == EXCERPT_CHARS and packet["excerpt"].endswith("…")


def test_a_refused_rearrival_says_it_was_tombstoned(make_note) -> None:
    from memory.errors import Conflict
    from memory.models import Event
    from memory.write import write_node
    from review.ceremony import reject

    node = make_note("The moon is made of cheese.")
    reject(node.pk, owner="owner", reason="false")
    with pytest.raises(Conflict):
        write_node(
            body=node.body,
            kind="note",
            jurisdiction="home",
            signature="owner",
            origins=[{"id": node.pk}],
        )
    event = Event.objects.get(kind="rearrival_refused")
    assert event.reason == "tombstoned"


def test_reject_and_unseal_refusals_carry_their_codes_and_the_event_its_words(make_note) -> None:
    from memory.errors import Conflict
    from memory.models import Event
    from review.ceremony import reject, seal, unseal
    from tests._helpers.acts import root_as_owner

    node = make_note("The moon is made of cheese.")
    with pytest.raises(Conflict) as not_sealed:
        unseal(node.pk, owner="owner")
    assert not_sealed.value.code == "not_sealed"
    seal(node.pk, owner="owner")
    unseal(node.pk, owner="owner", reason="shown again")
    assert Event.objects.get(node=node, kind="unsealed").reason == "shown again"
    event = reject(node.pk, owner="owner", reason="false")
    assert event.detail["content_key"] == node.content_key
    with pytest.raises(Conflict) as twice:
        reject(node.pk, owner="owner", reason="still false")
    assert twice.value.code == "is_rejected"
    ground = make_note("The boiler is serviced in May.")
    root_as_owner(ground)
    with pytest.raises(Conflict) as is_ground:
        reject(ground.pk, owner="owner", reason="false")
    assert is_ground.value.code == "is_ground"


def test_sleep_steps_count_every_batch_and_report_their_fields(make_note, monkeypatch) -> None:
    import memory.sleep.decay as decay_module
    import memory.sleep.promote as promote_module
    from memory.models import Event, Node

    monkeypatch.setattr(decay_module, "BATCH", 1)
    monkeypatch.setattr(promote_module, "BATCH", 1)
    for i in range(2):
        make_note(
            f"Old page {i}.",
            days_old=40,
            kind="internet",
            jurisdiction="wild",
            origins=[],
            source="https://example.org",
        )
    assert decay_module.decay() == {"count": 2, "candidates": 2, "unreachable": 2}
    read = [make_note(f"Read on three days, {i}.") for i in range(2)]
    Node.objects.filter(pk__in=[n.pk for n in read]).update(access_count=3, read_days=3)
    assert promote_module.promote()["count"] == 2
    node = Node.objects.get(pk=read[0].pk)
    assert Event.objects.get(node=node, kind="promoted_permanent").at == node.permanent_at


def test_the_promotion_threshold_ignores_unread_nodes(make_note) -> None:
    from memory.models import Node
    from memory.sleep.promote import promotion_threshold

    hot = make_note("Read ten times.")
    Node.objects.filter(pk=hot.pk).update(access_count=10)
    for i in range(19):
        make_note(f"Never read {i}.")
    assert promotion_threshold() == 10
