from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from memory.authority import authority_report, walk_back
from memory.errors import Conflict, Invalid, NotFound
from memory.models import Event, Node, Trust
from memory.scroll import commit_turn
from review.ceremony import propose, reject, root, seal, unseal
from tests._helpers.acts import root_as_owner

OWNER = "owner"
SECRET = "The safe combination is 4-8-15."


def _root(node, words="I adopt this."):
    return root(node.pk, adopting_words=words, expected_body_hash=node.body_hash, owner=OWNER)


def test_report_gives_trust_flags_hash_and_events_never_a_body(make_note):
    long_body = "The garden needs water every second day. " * 20
    node = make_note(long_body)
    propose(node.pk, actor="agent:scout", reason="often read")
    _root(node, "Yes, every second day.")
    report = authority_report(node.pk)
    assert (report["trust"], report["live"], report["permanent"]) == (Trust.GROUND, True, False)
    assert report["body_hash"] == node.body_hash
    assert [e["kind"] for e in report["events"]] == ["proposed", "rooted"]
    assert node.body.strip() not in json.dumps(report)
    assert len(report["excerpt"]) <= 160


def test_report_leaves_out_the_adopting_words(make_note):
    node = make_note("The garden needs water.")
    _root(node, "Ich übernehme das wörtlich.")
    assert "übernehme" not in json.dumps(authority_report(node.pk), ensure_ascii=False)


def test_a_sealed_node_reports_only_its_id_and_trust(make_note):
    node = make_note(SECRET)
    seal(node.pk, owner=OWNER)
    assert authority_report(node.pk) == {"id": node.pk, "trust": "sealed"}


def test_unseal_restores_the_full_report(make_note):
    node = make_note(SECRET)
    seal(node.pk, owner=OWNER)
    unseal(node.pk, owner=OWNER)
    report = authority_report(node.pk)
    assert report["excerpt"] == SECRET and report["body_hash"] == node.body_hash


def test_a_sealed_origin_is_previewed_without_its_words(make_note):
    secret = make_note(SECRET)
    child = make_note("I wrote down where the safe code is.", origins=[{"id": secret.pk}])
    seal(secret.pk, owner=OWNER)
    origins = authority_report(child.pk)["origins"]
    assert {"relation": "derived_from", "id": secret.pk, "trust": "sealed"} in origins
    assert "4-8-15" not in json.dumps(origins)


def test_a_rejected_node_shows_no_excerpt(make_note):
    node = make_note("The moon is cheese.")
    reject(node.pk, owner=OWNER, reason="false")
    report = authority_report(node.pk)
    assert report["trust"] == Trust.REJECTED and report["excerpt"] == ""


def test_out_of_domain_is_not_found(make_note):
    node = make_note("Quarterly numbers.", domain="work")
    assert authority_report(node.pk, domains=["work"])["id"] == node.pk
    with pytest.raises(NotFound):
        authority_report(node.pk, domains=["personal"])


def test_report_as_of_shows_trust_as_it_stood(make_note):
    node = make_note("The garden needs water.")
    proposed = propose(node.pk, actor="agent:scout")
    _root(node)
    report = authority_report(node.pk, as_of=proposed.at)
    assert report["trust"] == Trust.PROPOSED
    assert [e["kind"] for e in report["events"]] == ["proposed"]


def test_report_as_of_before_the_node_existed_is_not_found(make_note):
    node = make_note("The garden needs water.")
    with pytest.raises(NotFound):
        authority_report(node.pk, as_of="2000-01-01T00:00:00Z")


def test_walk_back_shows_the_adoption_origins_and_scroll(db, tmp_path, settings):
    settings.GROVE_SCROLL_DIR = tmp_path
    pair = commit_turn(conversation="c", user="Where is the key?", assistant="Under the pot.").node
    _root(pair, "Ja, genau so.")
    back = walk_back(pair.pk)
    assert back["adoption"]["adopting_words"] == "Ja, genau so."
    assert back["adoption"]["body_hash"] == pair.body_hash
    assert back["scroll"] == {"path": "c.jsonl", "offset": 0, "hash": pair.scroll_hash}


def test_walk_back_lists_origins_as_previews(make_note, root_note):
    node = make_note("The garden needs water.")
    _root(node)
    (origin,) = walk_back(node.pk)["origins"]
    assert (origin["id"], origin["relation"]) == (root_note.pk, "derived_from")
    assert "body" not in origin


def test_walk_back_refuses_what_is_not_ground(make_note):
    node = make_note("The garden needs water.")
    with pytest.raises(Conflict, match="not ground"):
        walk_back(node.pk)


def test_walk_back_of_a_sealed_ground_node_is_not_found(make_note):
    node = make_note(SECRET)
    _root(node)
    seal(node.pk, owner=OWNER)
    with pytest.raises(NotFound):
        walk_back(node.pk)


def test_walk_back_refuses_a_ground_node_outside_the_callers_domains(make_note) -> None:
    node = make_note("Ground in the work domain.", domain="work")
    root_as_owner(node)
    assert walk_back(node.pk, domains=["work"])["id"] == node.pk
    with pytest.raises(NotFound):
        walk_back(node.pk, domains=["personal"])


def test_the_authority_report_names_every_field_and_only_its_own_events(make_note) -> None:
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
    from memory.forgetting import let_go

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


def test_walk_back_reports_the_adoption_and_only_the_callers_origins(make_note, root_note) -> None:
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
    from django.utils import timezone

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
    from tests._helpers.acts import root_as_owner, supersede_as_owner

    old = make_note("The gate code is 1234.")
    root_as_owner(old)
    new = supersede_as_owner(old, "The gate code is 4321.")
    events = authority_report(old.pk)["events"]
    assert [e["related_node"] for e in events if e["kind"] == "superseded"] == [new.pk]


def test_a_similar_edge_is_not_an_origin(make_note, root_note) -> None:
    from memory.models import Edge

    alike = make_note("The gutter was cleared in spring.")
    node = make_note(
        "The gutter was cleared.",
        origins=[{"id": root_note.pk}, {"id": alike.pk, "relation": "similar"}],
    )
    assert Edge.objects.filter(from_node=node, to_node=alike, kind="similar").exists()
    assert [o["id"] for o in authority_report(node.pk)["origins"]] == [root_note.pk]
