"""Why a pending node goes, in the words the owner reads (memory/forgetting.py why_rows): the
whole list for each shape of neighbourhood, so that a phrase lost, doubled or reworded shows."""

from __future__ import annotations

import pytest

from memory.forgetting import EDGE_WORDS, NOT_READ, arrived_words, why_rows
from memory.models import Edge, EdgeKind, Node
from memory.questions import answer, plant_question

GOES = "nothing you keep depends on it"


def _link(a: Node, b: Node, kind: str) -> None:
    Edge.objects.create(from_node=a, to_node=b, kind=kind, created_by="sleep")


def test_every_edge_kind_has_its_words():
    assert set(EDGE_WORDS) == set(EdgeKind.values)


def test_a_node_with_no_links_says_so(lone):
    page = lone("Alone.", days_old=40)
    assert why_rows([page.pk], now_garbage=[page.pk]) == {
        page.pk: [NOT_READ, GOES, "it has no links to anything alive"]
    }


def test_holders_are_named_up_to_three_and_the_rest_counted(lone, make_note):
    page = lone("Cited by four.", days_old=40)
    holders = [lone(f"Citing page {i}.", days_old=40) for i in range(4)]
    for holder in holders:
        _link(holder, page, "cites")
    young = holders[1].pk  # not pending now: it keeps the page only while it is new
    gone = [page.pk, holders[0].pk, holders[2].pk, holders[3].pk]
    h = [n.pk for n in holders]
    assert why_rows([page.pk], now_garbage=gone)[page.pk] == [
        NOT_READ,
        GOES,
        f"#{h[0]} cites it, but nothing keeps #{h[0]} either",
        f"#{young} cites it, and keeps it only while #{young} is new",
        f"#{h[2]} cites it, but nothing keeps #{h[2]} either",
        "and 1 more that depend on it go too",
    ]


def test_what_it_holds_is_named_up_to_three_and_the_rest_counted(lone, make_note):
    origins = [lone(f"Origin {i}.", days_old=40) for i in range(4)]
    note = make_note("On four origins.", days_old=40, origins=[{"id": o.pk} for o in origins])
    o = [n.pk for n in origins]
    assert why_rows([note.pk], now_garbage=[note.pk, *o])[note.pk] == [
        NOT_READ,
        GOES,
        *(f"it came from #{i}; that keeps #{i}, not it" for i in o[:3]),
        "and it depends on 1 more, which do not keep it",
    ]


def test_a_node_held_and_holding_names_both_sides_and_its_other_links(lone, make_note):
    origin = lone("The session.", days_old=40)
    turn = make_note("A turn.", days_old=40, origins=[{"id": origin.pk}])
    later = make_note("A later turn citing it.", days_old=40, origins=[{"id": origin.pk}])
    _link(later, turn, "cites")
    _link(turn, later, "responds_to")
    _link(later, turn, "similar")
    _link(turn, origin, "consolidated_into")
    gone = [origin.pk, turn.pk, later.pk]
    assert why_rows([turn.pk], now_garbage=gone)[turn.pk] == [
        NOT_READ,
        GOES,
        f"#{later.pk} cites it, but nothing keeps #{later.pk} either",
        f"it came from #{origin.pk}; that keeps #{origin.pk}, not it",
        # By kind: consolidated_into, responds_to, similar.
        "its other links are 'merged into', made by sleep, 'next turn' in its conversation and "
        "'similar', made by sleep",
    ]


@pytest.mark.parametrize(
    ("kinds", "said"),
    [
        (["similar"], "its only link is 'similar', made by sleep"),
        (
            ["similar", "responds_to"],
            "its only links are 'next turn' in its conversation and 'similar', made by sleep",
        ),
    ],
)
def test_links_that_never_keep_a_node_are_its_only_links(lone, kinds, said):
    page, other = lone("A page.", days_old=40), lone("Another.", days_old=40)
    for kind in kinds:
        _link(other, page, kind)
    assert why_rows([page.pk], now_garbage=[page.pk, other.pk])[page.pk] == [
        NOT_READ,
        GOES,
        said,
    ]


def test_an_answered_question_says_its_question_is_answered(lone, make_note):
    about = lone("What it asks about.", days_old=40)
    question = plant_question(
        "Is it so?", about=[about.pk], signature="agent:scout", domain=about.domain
    )
    reply = make_note("It is so.", origins=[{"id": about.pk}])
    answer(question.pk, reply.pk, actor="agent:scout")
    why = why_rows([question.pk, about.pk], now_garbage=[question.pk, about.pk])
    assert why[question.pk][:3] == [NOT_READ, "its question is answered", GOES]
    assert why[about.pk][:2] == [NOT_READ, GOES]  # a question's words only for a question


def test_ids_past_a_chunk_of_400_say_what_they_would_alone(lone, make_note):
    pages = [lone(f"Page {i}.", days_old=40) for i in range(2)]
    holders = [make_note(f"On {p.body}", days_old=40, origins=[{"id": p.pk}]) for p in pages]
    gone = [*(p.pk for p in pages), *(h.pk for h in holders)]
    alone = why_rows([p.pk for p in pages], now_garbage=gone)
    for page, holder in zip(pages, holders, strict=True):
        assert f"#{holder.pk} came from it, but nothing keeps #{holder.pk} either" in alone[page.pk]
    padding = [10**9 + i for i in range(800)]  # ids no node has
    # The first page leads the first chunk, the second leads the second.
    ids = [pages[0].pk, *padding[:399], pages[1].pk, *padding[399:]]
    padded = why_rows(ids, now_garbage=gone)
    assert {p.pk: padded[p.pk] for p in pages} == alone


def test_three_holders_and_three_held_are_all_named_and_none_counted(lone, make_note):
    origins = [lone(f"Origin {i}.", days_old=40) for i in range(3)]
    note = make_note("On three.", days_old=40, origins=[{"id": o.pk} for o in origins])
    holders = [lone(f"Citing the note, {i}.", days_old=40) for i in range(3)]
    for holder in holders:
        _link(holder, note, "cites")
    gone = [note.pk, *(n.pk for n in [*origins, *holders])]
    assert why_rows([note.pk], now_garbage=gone)[note.pk] == [
        NOT_READ,
        GOES,
        *(f"#{h.pk} cites it, but nothing keeps #{h.pk} either" for h in holders),
        *(f"it came from #{o.pk}; that keeps #{o.pk}, not it" for o in origins),
    ]


def test_a_node_is_new_below_the_age_and_arrived_from_it_on():
    assert arrived_words(13.9, 14) == "it is still new (13.9 of the 14 days new nodes are kept)"
    assert arrived_words(14.0, 14) == "it arrived 14 days ago"
    assert arrived_words(40.4, 14) == "it arrived 40 days ago"
