"""Nested verbatim extracts: extract(parent, start, end) makes a child whose body is exactly
parent.body[start:end], nested in it; the write path enforces it, integrity checks it, the walk
goes deeper and shallower, and the API, MCP and node page reach it."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from memory import walk
from memory.custody.integrity import nests_not_verbatim
from memory.errors import Conflict, Invalid, NotFound
from memory.extract import extract
from memory.models import Edge, EdgeKind, Node
from memory.write import Nest, write_node
from review.ceremony import reject
from tests._helpers.agents import error_of, make_agent

TEXT = "The boiler is serviced in March. The roses are pruned in May."


@pytest.fixture
def parent(make_note):
    return make_note(TEXT)


def test_an_extract_is_the_parents_words_nested_in_it(parent):
    child = extract(parent.pk, start=33, end=len(TEXT), signature="owner").node
    assert child.body == TEXT[33:] == "The roses are pruned in May."
    assert Edge.objects.filter(from_node=parent, to_node=child, kind=EdgeKind.NESTS).exists()
    assert child.metadata["extract"] == {"parent": parent.pk, "start": 33, "end": len(TEXT)}
    assert (child.domain, child.jurisdiction) == (parent.domain, parent.jurisdiction)


def test_the_span_is_trimmed_of_whitespace(parent):
    child = extract(parent.pk, start=32, end=len(TEXT), signature="owner").node
    assert child.metadata["extract"]["start"] == 33 and child.body == TEXT[33:]


@pytest.mark.parametrize(("start", "end"), [(5, 5), (10, 3), (0, 999), (-1, 4), (32, 33), ("a", 3)])
def test_a_bad_span_is_refused_and_stores_nothing(parent, counts, start, end):
    before = counts()
    with pytest.raises(Invalid) as refused:
        extract(parent.pk, start=start, end=end, signature="owner")
    assert refused.value.code == "bad_span" and counts() == before


def test_an_extract_is_not_merged_with_the_same_words_elsewhere(parent, make_note):
    elsewhere = make_note("The roses are pruned in May.")
    child = extract(parent.pk, start=33, end=len(TEXT), signature="owner")
    assert child.status == "created" and child.node.pk != elsewhere.pk


def test_rejected_words_cannot_come_back_as_an_extract(parent, make_note):
    rejected = make_note("The roses are pruned in May.")
    reject(rejected.pk, owner="owner", reason="wrong month")
    with pytest.raises(Conflict):
        extract(parent.pk, start=33, end=len(TEXT), signature="owner")


def test_the_write_path_refuses_a_nest_that_is_not_verbatim(parent, counts):
    before = counts()
    with pytest.raises(Invalid) as refused:
        write_node(
            body="The roses are pruned in June.",
            kind="note",
            jurisdiction="home",
            signature="owner",
            origins=[{"id": parent.pk}],
            nest=Nest(parent=parent.pk, start=33, end=len(TEXT)),
        )
    assert refused.value.code == "not_verbatim" and counts() == before


def test_a_nests_edge_cannot_be_named_as_an_origin(parent, counts):
    before = counts()
    with pytest.raises(Invalid, match="made by extracting"):
        write_node(
            body="Pretends to be a part.",
            kind="note",
            jurisdiction="home",
            signature="owner",
            origins=[{"id": parent.pk, "relation": "nests"}],
        )
    assert counts() == before


def _nest_by_hand(container: int, part: int) -> None:
    """A nests edge written past the engine, as a bug or a hand in the file would."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at, "
            "created_by) VALUES (%s, %s, 'nests', 1.0, '2024-01-01', 'raw')",
            [container, part],
        )


def test_integrity_names_a_nests_edge_that_is_not_verbatim(parent, make_note):
    child = extract(parent.pk, start=0, end=32, signature="owner").node
    assert nests_not_verbatim() == []
    stranger = make_note("Not a part of anything.")
    _nest_by_hand(parent.pk, stranger.pk)
    [problem] = nests_not_verbatim()
    assert f"node {stranger.pk} is not verbatim in {parent.pk}" in problem
    assert str(child.pk) not in problem


def test_a_part_nested_in_a_container_it_was_not_cut_from_is_named(parent, make_note):
    """The same words at the same span are not enough: the part records its container."""
    child = extract(parent.pk, start=0, end=32, signature="owner").node
    twin = make_note(TEXT[:32] + " And nothing else.")
    assert twin.body[0:32] == child.body
    _nest_by_hand(twin.pk, child.pk)
    [problem] = nests_not_verbatim()
    assert problem.endswith(f"node {child.pk} is not verbatim in {twin.pk}")


def test_the_walk_goes_deeper_and_shallower(parent):
    child = extract(parent.pk, start=0, end=32, signature="owner").node
    ticket = walk.open_walk(parent.pk, holder="agent:w", domains=["personal"])
    routes = walk.around(ticket, holder="agent:w")["routes"]
    assert {"direction": "deeper", "target": child.pk} in [
        {"direction": r["direction"], "target": r["target"]} for r in routes
    ]
    down = walk.step(ticket, holder="agent:w", direction="deeper", target=child.pk)
    back = walk.around(down, holder="agent:w")["routes"]
    assert ("shallower", parent.pk) in [(r["direction"], r["target"]) for r in back]


def test_the_api_extracts_in_the_tokens_scope(client, parent, make_note):
    agent = make_agent(client, name="cutter", domains=["personal"])
    response = agent.post(f"nodes/{parent.pk}/extract", {"start": 0, "end": 32})
    assert response.status_code == 201, response.content
    assert Node.objects.get(pk=response.json()["id"]).body == TEXT[:32]
    foreign = make_note("Work only.", domain="work")
    assert agent.post(f"nodes/{foreign.pk}/extract", {"start": 0, "end": 4}).status_code == 404
    reader = make_agent(client, name="reader", domains=["personal"], read_only=True)
    response = reader.post(f"nodes/{parent.pk}/extract", {"start": 0, "end": 4})
    assert (response.status_code, error_of(response)) == (403, "read_only")


def test_an_unseen_parent_is_not_found(parent):
    with pytest.raises(NotFound):
        extract(parent.pk, start=0, end=4, signature="a", domains=["work"])


def test_the_node_page_extracts_without_javascript(owner_client, parent):
    page = owner_client.get(f"/node/{parent.pk}/").content.decode()
    assert 'id="extract-form"' in page
    response = owner_client.post(f"/node/{parent.pk}/extract/", {"start": "0", "end": "32"})
    child = Node.objects.get(metadata__extract__parent=parent.pk)
    assert response.status_code == 302 and response["Location"] == f"/node/{child.pk}/"
    refused = owner_client.post(f"/node/{parent.pk}/extract/", {"start": "9", "end": "2"})
    assert refused["Location"] == f"/node/{parent.pk}/"
