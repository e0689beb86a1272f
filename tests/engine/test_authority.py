from __future__ import annotations

import json

import pytest

from memory.authority import authority_report, walk_back
from memory.errors import Conflict, NotFound
from memory.models import Trust
from memory.scroll import commit_turn
from review.ceremony import propose, reject, root, seal, unseal

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
