"""The pending page says why each node goes in plain words: first the fact that would have kept
it, then what depends on it and its links by their plain names, never an edge kind's code."""

from __future__ import annotations

import re

import pytest

from memory.models import Edge, EdgeKind


@pytest.fixture
def conversation(lone, make_note):
    """An imported session nobody read, two turns from it, the second answering the first, and
    a 'similar' link sleep drew between the turns."""
    section = lone("conv-26, session 3.", days_old=40, kind="import", source="conv-26#D3")
    first, second = (
        make_note(
            f"Turn {i} of the session.", days_old=40, kind="utterance", origins=[{"id": section.pk}]
        )
        for i in (1, 2)
    )
    Edge.objects.create(from_node=second, to_node=first, kind="responds_to", created_by="import")
    Edge.objects.create(from_node=first, to_node=second, kind="similar", created_by="sleep")
    return section, first, second


def _why(html: str, node_id: int) -> str:
    row = html.split(f'id="node-{node_id}"')[1].split("</tr>")[0]
    return re.search(r'<p class="why">(.*?)</p>', row, re.S).group(1)


def test_a_conversation_turn_says_what_would_have_kept_it(owner_client, conversation):
    section, _first, second = conversation
    why = _why(owner_client.get("/review/decays/").content.decode(), second.pk)
    assert why.startswith("no agent read it; nothing you keep depends on it; ")
    assert f"it came from #{section.pk}; that keeps #{section.pk}, not it" in why
    assert "its other links are &#x27;next turn&#x27; in its conversation and" in why
    assert "&#x27;similar&#x27;, made by sleep" in why


def test_an_import_section_says_what_came_from_it_goes_too(owner_client, conversation):
    section, first, _second = conversation
    why = _why(owner_client.get("/review/decays/").content.decode(), section.pk)
    assert why.startswith("no agent read it; nothing you keep depends on it; ")
    assert f"#{first.pk} came from it, but nothing keeps #{first.pk} either" in why
    assert "it arrived 40 days ago" in why


def test_no_edge_kind_code_is_in_the_why(owner_client, conversation):
    html = owner_client.get("/review/decays/").content.decode()
    whys = " ".join(_why(html, node.pk) for node in conversation)
    codes = [code for code in EdgeKind.values if "_" in code or code == "nests"]
    assert [code for code in codes if code in whys] == []
