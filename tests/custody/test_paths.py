"""Custody on every path: duplicates, seals, tombstones, as-of, authority, the admin, tokens."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone

from memory import audit
from memory.errors import Conflict, NotFound
from memory.models import Edge, Event, Node
from memory.recall import recall
from memory.walk import open_walk, read_ticket
from memory.write import write_node
from review.ceremony import reject, seal
from review.queue import hidden_marks
from tests._helpers.agents import make_agent, write_note

WORDS = "The boiler is serviced in March."


def _write(body: str, origin: Node, **fields):
    fields.setdefault("kind", "note")
    fields.setdefault("jurisdiction", "home")
    fields.setdefault("signature", "scout")
    return write_node(body=body, origins=[{"id": origin.pk, "relation": "derived_from"}], **fields)


# --- duplicates and the seal --------------------------------------------------------------


def test_sealed_words_written_again_answer_as_unseen_words_would(client, root_note, make_note):
    sealed = make_note(WORDS)
    seal(sealed.pk, owner="owner")
    agent = make_agent(client)
    response = write_note(agent, root_note, body="the BOILER is serviced   in march.")
    assert response.status_code == 201
    answer = response.json()
    assert answer["status"] == "created" and answer["id"] != sealed.pk
    assert set(answer) == set(write_note(agent, root_note, body="Unseen words.").json())
    assert not Edge.objects.filter(from_node=sealed).exclude(to_node=root_note).exists()


def test_a_duplicate_never_crosses_jurisdiction_or_kind(root_note, make_note):
    wild = _write(WORDS, root_note, kind="internet", jurisdiction="wild", source="web").node
    origin = make_note("The owner's diary.")
    journal = _write(WORDS, origin, kind="journal").node
    assert journal.pk != wild.pk
    assert not Edge.objects.filter(from_node=wild, to_node=origin).exists()


def test_a_rearrival_with_new_origins_is_an_event_not_edges(root_note, make_note):
    first = make_note(WORDS)
    other = make_note("Another origin.")
    again = _write(WORDS, other, signature="someone")
    assert again.status == "duplicate" and again.node.pk == first.pk
    assert not Edge.objects.filter(from_node=first, to_node=other).exists()
    event = Event.objects.get(node=first, kind="rearrived")
    assert event.detail["origins"] == [[other.pk, "derived_from"]]
    assert event.detail["signature"] == "someone"


def test_a_revival_records_its_origins_on_the_event_not_as_edges(root_note, make_note):
    first = make_note(WORDS)
    with transaction.atomic():
        Node.objects.filter(pk=first.pk).update(decayed_at=timezone.now())
        audit.record("decayed", node=first, actor="sleep", reason="age_no_access")
    other = make_note("Another origin.")
    again = _write(WORDS, other)
    assert again.status == "revived"
    assert not Edge.objects.filter(from_node=first, to_node=other).exists()
    assert Event.objects.get(node=first, kind="revived").detail["origins"] == [
        [other.pk, "derived_from"]
    ]


@pytest.mark.parametrize("mark", ["\u200b", "\u00ad", "\U000e0041", "\u2061", "\u202e"])
def test_an_invisible_character_does_not_slip_past_a_tombstone(make_note, root_note, mark):
    node = make_note(WORDS)
    reject(node.pk, owner="owner", reason="wrong")
    with pytest.raises(Conflict) as refused:
        _write(WORDS.replace("boiler", f"boi{mark}ler"), root_note)
    assert str(node.pk) not in refused.value.message  # no id: sealed or not, one answer


@pytest.mark.parametrize(
    ("mark", "label"),
    [("\U000e0041", "U+E0041"), ("\u00ad", "U+00AD"), ("\u2061", "U+2061"), ("\u202e", "U+202E")],
)
def test_the_root_screen_flags_every_format_bidi_and_tag_character(mark, label):
    assert hidden_marks(f"pay {mark}now") == [label]


# --- as-of never shows what is hidden now -------------------------------------------------


def test_as_of_recall_does_not_return_words_rejected_since(make_note):
    node = make_note("The cellar key is under the third stone.")
    before = timezone.now()
    assert [p["id"] for p in recall("cellar key stone", as_of=before)] == [node.pk]
    reject(node.pk, owner="owner", reason="wrong")
    assert recall("cellar key stone", as_of=before) == []


def test_an_as_of_walk_cannot_read_words_rejected_since(make_note):
    node = make_note("The cellar key is under the third stone.")
    before = timezone.now()
    ticket = open_walk(node.pk, holder="agent:scout", as_of=before)
    reject(node.pk, owner="owner", reason="wrong")
    with pytest.raises(NotFound):
        read_ticket(ticket, holder="agent:scout")
    with pytest.raises(NotFound):
        open_walk(node.pk, holder="agent:scout", as_of=before)


# --- authority answers like read for agents -----------------------------------------------


def test_authority_lists_no_sealed_origin_to_an_agent(client, make_note):
    origin = make_note("A private origin.")
    node = _write("Derived words.", origin)
    agent = make_agent(client)
    listed = agent.get(f"nodes/{node.node.pk}/authority").json()["origins"]
    assert [o["id"] for o in listed] == [origin.pk]
    seal(origin.pk, owner="owner")
    listed = agent.get(f"nodes/{node.node.pk}/authority").json()["origins"]
    assert listed == []


def test_authority_and_propose_of_a_decayed_node_answer_like_read(client, make_note):
    node = make_note("Faded words.")
    agent = make_agent(client)
    assert agent.get(f"nodes/{node.pk}/authority").status_code == 200
    with transaction.atomic():
        Node.objects.filter(pk=node.pk).update(decayed_at=timezone.now())
        audit.record("decayed", node=node, actor="sleep", reason="age_no_access")
    assert agent.get(f"nodes/{node.pk}").status_code == 404
    assert agent.get(f"nodes/{node.pk}/authority").status_code == 404
    assert agent.post(f"nodes/{node.pk}/propose", {}).status_code == 404


# --- the admin ----------------------------------------------------------------------------


def test_the_admin_shows_no_sealed_body_or_snapshot(owner_client, make_note):
    node = make_note("Sealed secret words.")
    event = seal(node.pk, owner="owner")
    page = owner_client.get(f"/admin/memory/node/{node.pk}/change/")
    assert page.status_code == 200 and b"Sealed secret words" not in page.content
    page = owner_client.get(f"/admin/memory/event/{event.pk}/change/")
    assert page.status_code == 200 and b"Sealed secret words" not in page.content


# --- tokens -------------------------------------------------------------------------------


def test_a_write_through_a_token_records_the_token(client, owner_client, root_note):
    agent = make_agent(client)
    node_id = write_note(agent, root_note, signature="owner").json()["id"]
    node = Node.objects.get(pk=node_id)
    assert node.signature == "owner" and node.token == agent.token
    assert Event.objects.get(node=node, kind="arrived").token == agent.token
    page = owner_client.get(f"/node/{node_id}/").content.decode()
    assert "Written through" in page and "scout" in page
    assert "token scout" in owner_client.get(f"/audit/?node={node_id}").content.decode()


def test_turns_and_proposals_through_a_token_record_it(client, tmp_path, settings, make_note):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    agent = make_agent(client)
    turn = agent.post("turns", {"conversation": "porch", "user": "Rain?", "assistant": "Yes."})
    assert Node.objects.get(pk=turn.json()["id"]).token == agent.token
    node = make_note("Worth proposing.")
    assert agent.post(f"nodes/{node.pk}/propose", {}).status_code == 200
    assert Event.objects.get(node=node, kind="proposed").token == agent.token


def test_the_audit_page_says_how_far_the_record_is_verified(owner_client, make_note):
    from memory.custody.chain_verify import verify_from_checkpoint

    make_note("Verified.")
    assert "Record not verified yet" in owner_client.get("/audit/").content.decode()
    report = verify_from_checkpoint()
    page = owner_client.get("/audit/").content.decode()
    assert f"Record verified through event {report.through_id}" in page
