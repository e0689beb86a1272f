from __future__ import annotations

import pytest

from memory.errors import Conflict, Forbidden, Invalid, NotFound, TooLarge
from memory.models import Edge, Event, Node, Trust
from memory.trust import trust_counts, trust_map, trust_of, with_trust
from review.ceremony import (
    preview_supersede,
    propose,
    reject,
    root,
    seal,
    supersede,
    unseal,
)
from tests._helpers.acts import root_as_owner

OWNER = "owner"


def _seen(node) -> set[str]:
    """Trust as every reader sees it: the annotation, the map and the single lookup."""
    annotated = with_trust(Node.objects.filter(pk=node.pk)).get().trust
    return {annotated, trust_map([node.pk])[node.pk], trust_of(node.pk)}


def test_a_fresh_node_is_unreviewed(make_note):
    assert _seen(make_note("The boiler is serviced in March.")) == {Trust.UNREVIEWED}


def test_propose_makes_it_proposed_and_agents_may(make_note):
    node = make_note("Ana prefers tea.")
    event = propose(node.pk, actor="agent:scout", reason="seen three times")
    assert (event.kind, event.actor, event.detail["body_hash"]) == (
        "proposed",
        "agent:scout",
        node.body_hash,
    )
    assert _seen(node) == {Trust.PROPOSED}


def test_propose_twice_is_refused(make_note):
    node = make_note("Ana prefers tea.")
    propose(node.pk, actor="agent:scout")
    with pytest.raises(Conflict, match="already proposed"):
        propose(node.pk, actor="agent:other")


def test_propose_hides_sealed_and_out_of_domain_nodes(make_note):
    sealed = make_note("A private thing.")
    seal(sealed.pk, owner=OWNER)
    with pytest.raises(NotFound):
        propose(sealed.pk, actor="agent:scout")
    work = make_note("A work thing.", domain="work")
    with pytest.raises(NotFound):
        propose(work.pk, actor="agent:scout", domains=["personal"])


def test_root_makes_it_ground_with_the_hash_and_words_on_record(make_note):
    node = make_note("The spare key is under the blue pot.")
    propose(node.pk, actor="agent:scout")
    event = root_as_owner(node, "Yes, that is where it is.")
    assert event.detail == {
        "body_hash": node.body_hash,
        "adopting_words": "Yes, that is where it is.",
    }
    assert _seen(node) == {Trust.GROUND}


def test_root_refuses_an_agent(make_note, counts):
    node = make_note("The spare key is under the blue pot.")
    before = counts()
    with pytest.raises(Forbidden):
        root(node.pk, adopting_words="yes", expected_body_hash=node.body_hash, owner="agent:x")
    assert counts() == before


def test_root_refuses_empty_adopting_words(make_note):
    node = make_note("The spare key is under the blue pot.")
    with pytest.raises(Invalid, match="adopting words") as refused:
        root_as_owner(node, "   ")
    assert refused.value.code == "no_adopting_words"


def test_root_refuses_an_unknown_node(db):
    with pytest.raises(NotFound):
        root(999999, adopting_words="yes", expected_body_hash="a" * 64, owner=OWNER)


def test_seal_hides_and_unseal_restores_the_earlier_trust(make_note):
    node = make_note("My blood pressure readings.")
    root_as_owner(node)
    seal(node.pk, owner=OWNER, reason="private")
    assert _seen(node) == {Trust.SEALED}
    unseal(node.pk, owner=OWNER)
    assert _seen(node) == {Trust.GROUND}


def test_seal_and_unseal_refuse_agents(make_note):
    node = make_note("My blood pressure readings.")
    with pytest.raises(Forbidden):
        seal(node.pk, owner="agent:x")
    seal(node.pk, owner=OWNER)
    with pytest.raises(Forbidden):
        unseal(node.pk, owner="Agent:x")


def test_reject_makes_it_rejected_and_needs_a_reason(make_note):
    node = make_note("The moon is made of cheese.")
    with pytest.raises(Invalid, match="reason") as refused:
        reject(node.pk, owner=OWNER, reason=" ")
    assert refused.value.code == "no_reason"
    reject(node.pk, owner=OWNER, reason="false")
    assert _seen(node) == {Trust.REJECTED}
    with pytest.raises(Conflict, match="already rejected"):
        reject(node.pk, owner=OWNER, reason="still false")


def test_reject_refuses_an_agent(make_note):
    node = make_note("The moon is made of cheese.")
    with pytest.raises(Forbidden):
        reject(node.pk, owner="agent:x", reason="false")


def test_rejected_content_is_refused_on_rearrival_end_to_end(make_note, root_note):
    node = make_note("The moon is made of cheese.")
    reject(node.pk, owner=OWNER, reason="false")
    with pytest.raises(Conflict, match="rejected by the owner") as refused:
        make_note("the MOON is made of   cheese.")
    assert refused.value.code == "tombstoned"
    event = Event.objects.get(kind="rearrival_refused")
    assert event.node_id == node.pk
    assert Node.objects.filter(content_key=node.content_key).count() == 1


def test_rejected_content_may_live_in_another_domain(make_note):
    node = make_note("The moon is made of cheese.")
    reject(node.pk, owner=OWNER, reason="false")
    assert make_note("The moon is made of cheese.", domain="fiction").pk != node.pk


def test_a_long_reason_is_kept_whole_in_detail(make_note):
    node = make_note("The moon is made of cheese.")
    long = "because " * 20
    event = reject(node.pk, owner=OWNER, reason=long)
    assert len(event.reason) <= 64
    assert event.detail["reason"] == long.strip()


def test_preview_shows_the_scrubbed_text_and_its_hash():
    preview = preview_supersede("<think>hm</think> The key moved to the shed. ")
    assert preview["body"] == "The key moved to the shed."
    import hashlib

    assert preview["body_hash"] == hashlib.sha256(b"The key moved to the shed.").hexdigest()


def test_supersede_writes_new_ground_and_retires_the_old(make_note):
    old = make_note("The spare key is under the blue pot.", kind="journal", domain="home")
    root_as_owner(old)
    preview = preview_supersede("<think>x</think>The spare key is in the shed.")
    new = supersede(
        old.pk,
        new_body="<think>x</think>The spare key is in the shed.",
        adopting_words="Moved it today.",
        expected_body_hash=preview["body_hash"],
        owner=OWNER,
    )
    assert (new.body, new.kind, new.jurisdiction, new.domain, new.signature) == (
        "The spare key is in the shed.",
        "journal",
        "home",
        "home",
        OWNER,
    )
    assert Edge.objects.filter(from_node=new, to_node=old, kind="derived_from").exists()
    assert _seen(new) == {Trust.GROUND}
    assert _seen(old) == {Trust.SUPERSEDED}
    superseded = Event.objects.get(node=old, kind="superseded")
    assert superseded.related_node_id == new.pk


def test_supersede_refuses_a_hash_of_the_unscrubbed_text(make_note, counts):
    import hashlib

    old = make_note("The spare key is under the blue pot.")
    root_as_owner(old)
    raw = "<think>x</think>The spare key is in the shed."
    before = counts()
    with pytest.raises(Conflict, match="stale hash"):
        supersede(
            old.pk,
            new_body=raw,
            adopting_words="yes",
            expected_body_hash=hashlib.sha256(raw.encode()).hexdigest(),
            owner=OWNER,
        )
    assert counts() == before


def test_supersede_refuses_the_same_text(make_note):
    old = make_note("The spare key is under the blue pot.")
    root_as_owner(old)
    with pytest.raises(Invalid, match="same words"):
        supersede(
            old.pk,
            new_body=old.body,
            adopting_words="yes",
            expected_body_hash=old.body_hash,
            owner=OWNER,
        )
    assert trust_of(old.pk) == Trust.GROUND


def test_supersede_onto_existing_text_roots_that_node(make_note):
    old = make_note("The spare key is under the blue pot.")
    existing = make_note("The spare key is in the shed.")
    root_as_owner(old)
    new = supersede(
        old.pk,
        new_body=existing.body,
        adopting_words="yes",
        expected_body_hash=existing.body_hash,
        owner=OWNER,
    )
    assert new.pk == existing.pk
    assert (trust_of(existing.pk), trust_of(old.pk)) == (Trust.GROUND, Trust.SUPERSEDED)


def test_supersede_with_rejected_text_is_refused_and_the_refusal_recorded(make_note):
    old = make_note("The spare key is under the blue pot.")
    wrong = make_note("The spare key is on the roof.")
    reject(wrong.pk, owner=OWNER, reason="false")
    root_as_owner(old)
    with pytest.raises(Conflict, match="rejected by the owner"):
        supersede(
            old.pk,
            new_body=wrong.body,
            adopting_words="yes",
            expected_body_hash=wrong.body_hash,
            owner=OWNER,
        )
    assert Event.objects.filter(kind="rearrival_refused", node=wrong).count() == 1
    assert trust_of(old.pk) == Trust.GROUND


def test_supersede_refuses_an_agent(make_note):
    old = make_note("The spare key is under the blue pot.")
    root_as_owner(old)
    p = preview_supersede("new")
    with pytest.raises(Forbidden):
        supersede(
            old.pk,
            new_body="new",
            adopting_words="y",
            expected_body_hash=p["body_hash"],
            owner="agent:x",
        )


def test_every_trust_state_as_of_an_earlier_time(make_note):
    node = make_note("The spare key is under the blue pot.")
    proposed = propose(node.pk, actor="agent:scout")
    rooted = root_as_owner(node)
    sealed = seal(node.pk, owner=OWNER)
    assert trust_of(node.pk, as_of=proposed.at) == Trust.PROPOSED
    assert trust_of(node.pk, as_of=rooted.at) == Trust.GROUND
    assert trust_of(node.pk, as_of=sealed.at) == Trust.SEALED
    annotated = with_trust(Node.objects.filter(pk=node.pk), as_of=rooted.at).get()
    assert annotated.trust == Trust.GROUND


def test_trust_counts_agree_with_every_nodes_trust(make_note):
    proposed, ground, resealed, unsealed, rejected = (make_note(f"Count {i}.") for i in range(5))
    propose(proposed.pk, actor="agent:scout")
    root_as_owner(ground)
    for node in (resealed, unsealed):
        seal(node.pk, owner=OWNER)
        unseal(node.pk, owner=OWNER)
    seal(resealed.pk, owner=OWNER)  # the latest seal/unseal decides
    reject(rejected.pk, owner=OWNER, reason="wrong")
    every = trust_map(Node.objects.values_list("pk", flat=True))
    assert every[resealed.pk] == Trust.SEALED and every[unsealed.pk] == Trust.UNREVIEWED
    expected = {t.value: list(every.values()).count(t.value) for t in Trust}
    assert trust_counts() == expected
    assert trust_counts(total=len(every)) == expected


def test_superseding_back_to_the_words_it_replaced_is_refused(make_note):
    old = make_note("The spare key is under the blue pot.")
    root_as_owner(old)
    new = supersede(
        old.pk,
        new_body="The spare key is in the shed.",
        adopting_words="yes",
        expected_body_hash=preview_supersede("The spare key is in the shed.")["body_hash"],
        owner=OWNER,
    )
    # The old words still live in the superseded node, which is never ground again.
    with pytest.raises(Conflict) as refused:
        supersede(
            new.pk,
            new_body=old.body,
            adopting_words="yes",
            expected_body_hash=old.body_hash,
            owner=OWNER,
        )
    assert refused.value.code == "is_superseded"
    assert (trust_of(old.pk), trust_of(new.pk)) == (Trust.SUPERSEDED, Trust.GROUND)


def test_sealing_twice_is_refused_by_its_code(make_note):
    node = make_note("Sealed once.")
    seal(node.pk, owner=OWNER)
    with pytest.raises(Conflict) as refused:
        seal(node.pk, owner=OWNER)
    assert refused.value.code == "is_sealed"


def test_an_act_without_the_owners_name_is_refused_as_no_actor(make_note, counts):
    node = make_note("The boiler is serviced in March.")
    before = counts()
    for nobody in ("", "  ", None):
        with pytest.raises(Invalid, match="needs the owner's name") as refused:
            seal(node.pk, owner=nobody)
        assert refused.value.code == "no_actor"
    assert counts() == before


def test_a_proposal_without_an_actor_says_so(make_note, counts):
    node = make_note("Ana prefers tea.")
    before = counts()
    with pytest.raises(Invalid) as refused:
        propose(node.pk, actor=" ")
    assert (refused.value.code, str(refused.value)) == ("no_actor", "a proposal needs an actor")
    assert counts() == before


def test_a_malformed_hash_is_refused_as_bad_hash(make_note, counts):
    node = make_note("The spare key is under the blue pot.")
    before = counts()
    for bad in ("abc", None, "g" * 64):
        with pytest.raises(Invalid) as refused:
            root(node.pk, adopting_words="yes", expected_body_hash=bad, owner=OWNER)
        assert refused.value.code == "bad_hash"
    assert counts() == before


def test_a_reason_that_is_not_text_is_refused_as_bad_reason(make_note, counts):
    node = make_note("The moon is made of cheese.")
    before = counts()
    with pytest.raises(Invalid, match="reason must be text") as refused:
        seal(node.pk, owner=OWNER, reason=["private"])
    assert refused.value.code == "bad_reason"
    assert counts() == before


def test_the_seal_event_keeps_the_owners_reason(make_note):
    node = make_note("My blood pressure readings.")
    event = seal(node.pk, owner=OWNER, reason="private")
    assert Event.objects.get(pk=event.pk).reason == "private"


def test_rooting_ground_again_is_refused_as_is_ground(make_note, counts):
    node = make_note("The spare key is under the blue pot.")
    root_as_owner(node)
    before = counts()
    with pytest.raises(Conflict, match="already ground") as refused:
        root_as_owner(node, "yes again")
    assert refused.value.code == "is_ground"
    assert counts() == before


def test_rooting_a_decayed_node_says_to_restore_it_first(make_note, counts):
    from memory.forgetting import let_go

    node = make_note("Let go before the owner adopted it.")
    let_go(node.pk, actor=OWNER)
    node.refresh_from_db()
    before = counts()
    with pytest.raises(Conflict, match="restore it before rooting") as refused:
        root_as_owner(node)
    assert refused.value.code == "decayed"
    assert counts() == before


def test_rooting_with_a_stale_hash_tells_the_owner_to_review_again(make_note, counts):
    node = make_note("The spare key is under the blue pot.")
    before = counts()
    with pytest.raises(Conflict) as refused:
        root(node.pk, adopting_words="yes", expected_body_hash="0" * 64, owner=OWNER)
    assert refused.value.code == "stale_hash"
    assert str(refused.value).endswith("; review the text again before adopting it")
    assert counts() == before


def test_the_loser_of_a_race_to_root_is_told_race_lost(make_note, monkeypatch):
    import review.ceremony as ceremony

    node = make_note("The spare key is under the blue pot.")
    root_as_owner(node)
    # The racing act read the trust before the winner committed: the unique index refuses it.
    monkeypatch.setattr(ceremony, "trust_of", lambda pk, **kw: Trust.UNREVIEWED)
    with pytest.raises(Conflict, match="another act got there first") as refused:
        root_as_owner(node, "me too")
    assert refused.value.code == "race_lost"
    assert Event.objects.filter(node=node, kind="rooted").count() == 1


def test_superseding_what_is_not_ground_is_refused_as_not_ground(make_note, counts):
    from tests._helpers.acts import supersede_as_owner

    node = make_note("The spare key is under the blue pot.")
    before = counts()
    with pytest.raises(Conflict, match="only ground can be superseded") as refused:
        supersede_as_owner(node, "The spare key is in the shed.")
    assert refused.value.code == "not_ground"
    assert counts() == before


def test_a_ground_pair_cannot_be_superseded(db, counts):
    from memory.write import ScrollPointer, write_node
    from tests._helpers.acts import supersede_as_owner

    pointer = ScrollPointer(path="scroll/c1.jsonl", offset=0, hash="a" * 64)
    pair = write_node(
        body="u: hi\na: hello", kind="pair", jurisdiction="home", signature=OWNER, scroll=pointer
    ).node
    root_as_owner(pair)
    before = counts()
    with pytest.raises(Invalid) as refused:
        supersede_as_owner(pair, "u: hi\na: goodbye")
    assert refused.value.code == "is_pair"
    assert str(refused.value) == "a pair is what was said: it cannot be superseded"
    assert counts() == before


def test_superseding_with_a_stale_hash_is_refused_as_stale_hash(make_note, counts):
    old = make_note("The spare key is under the blue pot.")
    root_as_owner(old)
    before = counts()
    with pytest.raises(Conflict, match="preview it again") as refused:
        supersede(
            old.pk,
            new_body="The spare key is in the shed.",
            adopting_words="yes",
            expected_body_hash="0" * 64,
            owner=OWNER,
        )
    assert refused.value.code == "stale_hash"
    assert counts() == before


def test_superseding_with_the_same_text_is_refused_as_same(make_note, counts):
    old = make_note("The spare key is under the blue pot.")
    root_as_owner(old)
    before = counts()
    with pytest.raises(Invalid) as refused:
        supersede(
            old.pk,
            new_body=old.body,
            adopting_words="yes",
            expected_body_hash=old.body_hash,
            owner=OWNER,
        )
    assert (refused.value.code, refused.value.status) == ("unchanged", 400)
    assert counts() == before


def test_the_superseded_event_records_both_hashes(make_note):
    from tests._helpers.acts import supersede_as_owner

    old = make_note("The spare key is under the blue pot.")
    root_as_owner(old)
    new = supersede_as_owner(old, "The spare key is in the shed.", words="Moved it.")
    event = Event.objects.get(node=old, kind="superseded")
    assert event.detail == {
        "body_hash": old.body_hash,
        "new_body_hash": new.body_hash,
        "adopting_words": "Moved it.",
    }


def test_a_new_body_that_is_not_text_is_refused_as_bad_body():
    with pytest.raises(Invalid, match="must be text") as refused:
        preview_supersede(["The key moved."])
    assert refused.value.code == "bad_body"


def test_a_new_body_of_only_scaffolding_is_refused_with_why():
    with pytest.raises(Invalid) as refused:
        preview_supersede("<think>only thinking</think>  ")
    assert str(refused.value) == "the new body is empty once transport scaffolding is removed"


def test_refusal_messages_the_owner_reads_are_whole(make_note):
    node = make_note("The spare key is under the blue pot.")
    with pytest.raises(Invalid) as not_text:
        preview_supersede(b"bytes")
    assert str(not_text.value) == "the new body must be text"
    root_as_owner(node)
    with pytest.raises(Invalid) as same:
        supersede(
            node.pk,
            new_body=node.body,
            adopting_words="yes",
            expected_body_hash=node.body_hash,
            owner=OWNER,
        )
    assert str(same.value) == (
        f"the correction says the same words as #{node.pk}: change what is wrong, "
        "or leave it as it is"
    )
    with pytest.raises(Conflict) as ground:
        reject(node.pk, owner=OWNER, reason="false")
    assert str(ground.value).endswith("or confirm twice that it is false")


def test_the_new_ground_keeps_the_old_source_and_its_rooting_names_the_old(make_note):
    from tests._helpers.acts import supersede_as_owner

    old = make_note("The spare key is under the blue pot.", source="notebook.md")
    root_as_owner(old)
    new = supersede_as_owner(old, "The spare key is in the shed.")
    assert new.source == "notebook.md"
    rooted = Event.objects.get(node=new, kind="rooted")
    assert rooted.related_node_id == old.pk


def test_unseal_and_decline_without_a_reason_record_none(make_note):
    from review.ceremony import decline

    node = make_note("Ana prefers tea.")
    seal(node.pk, owner=OWNER)
    assert unseal(node.pk, owner=OWNER).reason == ""
    propose(node.pk, actor="agent:scout")
    assert decline(node.pk, owner=OWNER).reason == ""


def test_a_long_unseal_reason_is_kept_whole_in_detail(make_note):
    node = make_note("My blood pressure readings.")
    seal(node.pk, owner=OWNER)
    long = "shown again because " * 5
    event = unseal(node.pk, owner=OWNER, reason=long)
    assert event.detail == {"reason": long.strip()}


def test_the_reject_event_records_the_hash_of_the_words_rejected(make_note):
    node = make_note("The moon is made of cheese.")
    event = reject(node.pk, owner=OWNER, reason="false")
    assert event.detail["body_hash"] == node.body_hash


def test_adopting_words_may_be_2000_characters_and_no_more(make_note, counts):
    node, other = make_note("The spare key is under the blue pot."), make_note("Ana prefers tea.")
    before = counts()
    with pytest.raises(TooLarge) as refused:
        root_as_owner(other, "y" * 2001)
    assert str(refused.value) == "adopting words are limited to 2000 characters"
    assert counts() == before
    assert root_as_owner(node, "y" * 2000).detail["adopting_words"] == "y" * 2000


def test_hash_and_words_refusals_tell_the_owner_what_to_give(make_note):
    node = make_note("The spare key is under the blue pot.")
    with pytest.raises(Invalid) as bad_hash:
        root(node.pk, adopting_words="yes", expected_body_hash="abc", owner=OWNER)
    assert str(bad_hash.value) == (
        "expected_body_hash must be the 64-hex sha256 of the body as displayed"
    )
    with pytest.raises(Invalid) as no_words:
        root_as_owner(node, "")
    assert str(no_words.value) == (
        "adopting words are required: say, in your own words, that you adopt this"
    )


def test_propose_and_seal_without_a_reason_record_none_and_a_long_seal_reason_is_kept(make_note):
    node, other = make_note("Ana prefers tea."), make_note("My blood pressure readings.")
    assert propose(node.pk, actor="agent:scout").reason == ""
    assert seal(node.pk, owner=OWNER).reason == ""
    long = "private because " * 6
    assert seal(other.pk, owner=OWNER, reason=long).detail == {"reason": long.strip()}


def test_proposing_a_decayed_node_is_refused_by_its_code(make_note) -> None:
    from memory.forgetting import let_go

    node = make_note("Let go before anyone proposed it.")
    let_go(node.pk, actor="owner")
    with pytest.raises(Conflict) as refused:
        propose(node.pk, actor="agent:scout")
    assert refused.value.code == "decayed"


def test_rejecting_words_rejects_their_twins_of_any_kind_and_jurisdiction(make_note, lone):
    node = make_note("The moon is made of cheese.")
    journal = make_note("The moon is made of cheese.", kind="journal")
    wild = lone("The moon is made of cheese.")
    elsewhere = make_note("The moon is made of cheese.", domain="fiction")
    assert len({node.pk, journal.pk, wild.pk, elsewhere.pk}) == 4
    reject(node.pk, owner=OWNER, reason="false")
    assert trust_map([journal.pk, wild.pk, elsewhere.pk]) == {
        journal.pk: Trust.REJECTED,
        wild.pk: Trust.REJECTED,
        elsewhere.pk: Trust.UNREVIEWED,
    }
    twin = Event.objects.get(node=journal, kind="rejected")
    assert (twin.actor, twin.related_node_id, twin.detail["twin_of"]) == (OWNER, node.pk, node.pk)


def test_a_ground_twin_needs_the_second_confirmation(make_note):
    node = make_note("The moon is made of cheese.")
    twin = make_note("The moon is made of cheese.", kind="journal")
    root_as_owner(twin)
    with pytest.raises(Conflict) as refused:
        reject(node.pk, owner=OWNER, reason="false")
    assert refused.value.code == "is_ground"
    assert not Event.objects.filter(kind="rejected").exists()
    reject(node.pk, owner=OWNER, reason="false", ground_confirmed=True)
    assert trust_of(twin.pk) == Trust.REJECTED


def test_a_sealed_ground_node_is_rejected_only_when_confirmed_twice(make_note):
    node = make_note("The spare key is with Ana.")
    root_as_owner(node)
    seal(node.pk, owner=OWNER)
    with pytest.raises(Conflict) as refused:
        reject(node.pk, owner=OWNER, reason="false")
    assert refused.value.code == "is_ground"
