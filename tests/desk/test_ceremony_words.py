"""What the ceremonies say when they refuse, and how they keep a reason: the exact words and
codes the owner and the agents read (review/ceremony.py's mutation survivors, issue 16)."""

from __future__ import annotations

import pytest
import time_machine
from django.utils import timezone

from memory.errors import Conflict, Forbidden, Invalid, NotFound
from memory.forgetting import let_go
from memory.models import Event
from review.ceremony import MAX_REASON_CHARS, decline, propose, root, seal
from tests._helpers.acts import root_as_owner
from tests._helpers.agents import error_of, make_agent

OWNER = "owner"


@pytest.fixture
def agent(client, db):
    return make_agent(client, domains=["work", "personal"])


def test_an_act_without_an_owner_or_by_an_agent_says_why_in_full(make_note, counts):
    node = make_note("The boiler is serviced in March.")
    before = counts()
    with pytest.raises(Invalid) as nobody:
        seal(node.pk, owner=" ")
    assert str(nobody.value) == "an act needs the owner's name"
    with pytest.raises(Forbidden) as agent:
        root(node.pk, adopting_words="yes", expected_body_hash=node.body_hash, owner="agent:x")
    assert str(agent.value) == "only the owner performs this act; an agent may only propose"
    assert (agent.value.code, agent.value.status) == ("forbidden", 403)
    assert counts() == before


def test_a_reason_that_is_not_text_is_refused_in_those_words(make_note, counts):
    node = make_note("The moon is made of cheese.")
    before = counts()
    with pytest.raises(Invalid) as refused:
        decline(node.pk, owner=OWNER, reason=42)
    assert (str(refused.value), refused.value.code) == ("reason must be text", "bad_reason")
    assert counts() == before


def test_the_reject_screen_says_a_reason_is_required_in_those_words(owner_client, make_note):
    node = make_note("The moon is made of cheese.")
    response = owner_client.post(f"/review/{node.pk}/reject/", {"reason": " ", "confirmed": "yes"})
    assert response.status_code == 400
    assert '<span class="excerpt">a reason is required</span>' in response.content.decode()
    assert not Event.objects.filter(node=node, kind="rejected").exists()


def test_a_reason_of_exactly_the_label_width_is_kept_whole_as_the_label(agent, make_note):
    node = make_note("The boiler is serviced in March.")
    reason = "r" * MAX_REASON_CHARS
    assert agent.post(f"nodes/{node.pk}/propose", {"reason": reason}).status_code == 200
    event = Event.objects.get(node=node, kind="proposed")
    assert event.reason == reason
    assert event.detail == {"body_hash": node.body_hash}


def test_a_reason_one_past_the_label_width_is_cut_to_it_and_kept_whole_in_detail(agent, make_note):
    node = make_note("The boiler is serviced in March.")
    reason = "r" * (MAX_REASON_CHARS + 1)
    assert agent.post(f"nodes/{node.pk}/propose", {"reason": reason}).status_code == 200
    event = Event.objects.get(node=node, kind="proposed")
    assert event.reason == "r" * (MAX_REASON_CHARS - 1) + "…"
    assert event.detail == {"body_hash": node.body_hash, "reason": reason}


def test_proposing_a_sealed_node_is_answered_as_an_unknown_id_is(make_note):
    node = make_note("My blood pressure readings.")
    seal(node.pk, owner=OWNER)
    with pytest.raises(NotFound) as sealed:
        propose(node.pk, actor="agent:scout")
    with pytest.raises(NotFound) as unknown:
        propose(node.pk + 1000, actor="agent:scout")
    assert str(sealed.value) == f"node {node.pk} not found"
    assert str(unknown.value) == f"node {node.pk + 1000} not found"
    assert sealed.value.code == unknown.value.code == "not_found"


def test_proposing_again_or_proposing_ground_answers_409_with_the_trust_as_code(agent, make_note):
    proposed, ground = make_note("Ana prefers tea."), make_note("The key is in the shed.")
    assert agent.post(f"nodes/{proposed.pk}/propose").status_code == 200
    root_as_owner(ground)
    again = agent.post(f"nodes/{proposed.pk}/propose")
    assert (again.status_code, error_of(again)) == (409, "is_proposed")
    rooted = agent.post(f"nodes/{ground.pk}/propose")
    assert (rooted.status_code, error_of(rooted)) == (409, "is_ground")


def test_proposing_a_decayed_node_says_it_has_decayed(make_note):
    node = make_note("Let go before anyone proposed it.")
    let_go(node.pk, actor=OWNER)
    with pytest.raises(Conflict) as refused:
        propose(node.pk, actor="agent:scout")
    assert (str(refused.value), refused.value.code) == (f"node {node.pk} has decayed", "decayed")


def test_decline_names_the_latest_proposal_when_the_clock_stands_still(make_note):
    # Event.at is timezone.now(): two acts may share an instant, and the (at, id) order that
    # trust reads then puts the later-appended proposal last. Decline must name that one.
    node = make_note("The boiler is serviced every March.")
    with time_machine.travel(timezone.now(), tick=False):
        first = propose(node.pk, actor="agent:scout")
        decline(node.pk, owner=OWNER)
        second = propose(node.pk, actor="agent:heron")
        assert first.at == second.at
        event = decline(node.pk, owner=OWNER)
    assert (event.detail["proposal"], event.detail["proposer"]) == (second.pk, "agent:heron")


def test_reject_and_unseal_refusals_carry_their_codes_and_the_event_its_words(make_note) -> None:
    from review.ceremony import reject, seal, unseal

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
