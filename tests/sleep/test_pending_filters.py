"""The pending page's filters and groups (memory/forgetting.py matching_pending, pending_groups,
and the per-graph-state copies groups_at and matching_at): each filter keeps exactly the pending
nodes it names, blank means any, and a group says its origin, domain, authors, count, oldest and
reads."""

from __future__ import annotations

import pytest

from memory.forgetting import (
    _DERIVED_KEPT,
    groups_at,
    matching_at,
    matching_pending,
    pending_groups,
    pending_ids,
    pending_marks,
)
from memory.models import Node
from memory.read import read
from review.ceremony import reject, seal


@pytest.fixture
def mixed(lone, make_note) -> dict[str, Node]:
    """Old pending nodes that differ in one field each from `plain`."""
    session = make_note("A session of two turns.", days_old=40, kind="journal")
    return {
        "plain": lone("Plain page about tea.", days_old=40),
        "work": lone("Work page about tea.", days_old=40, domain="work"),
        "import": lone("An import about tea.", days_old=40, kind="import"),
        "home": lone("Home page about tea.", days_old=40, jurisdiction="home"),
        "agent": lone("Scout's page about tea.", days_old=40, signature="agent:scout"),
        "percent": lone("Fifty PERCENT_OFF% coffee.", days_old=40),
        "cafe": lone("Un café noir.", days_old=40),
        "path": lone(r"Saved in C:\Cups\notes.", days_old=40),
        "session": session,
        "turn": make_note("Turn about tea.", days_old=40, origins=[{"id": session.pk}]),
    }


def _pending() -> list[int]:
    return pending_ids()[0]


def _names(mixed: dict[str, Node], ids: list[int]) -> set[str]:
    by_id = {n.pk: name for name, n in mixed.items()}
    return {by_id[i] for i in ids}


def test_the_fixture_is_all_pending(mixed):
    assert _names(mixed, _pending()) == set(mixed)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"domain": "work"}, {"work"}),
        ({"kind": "import"}, {"import"}),
        ({"kind": "note"}, {"turn"}),
        ({"jurisdiction": "home"}, {"home", "session", "turn"}),
        ({"author": "agent:scout"}, {"agent"}),
        ({"words": "TEA"}, {"plain", "work", "import", "home", "agent", "turn"}),
        ({"words": "percent_off%"}, {"percent"}),
        ({"words": "t%a"}, set()),  # a % typed is a character to find, never a wildcard
        ({"words": "f_fty"}, set()),
        ({"words": "off% c"}, {"percent"}),
        ({"words": "CAFÉ"}, {"cafe"}),  # the words folded as the body is
        ({"words": r"c:\cups\n"}, {"path"}),  # a backslash is a character too
        ({"domain": "work", "words": "tea"}, {"work"}),
        ({"domain": "", "kind": "", "author": "", "words": "", "origin": ""}, None),
        ({"origin": "not a number"}, None),
    ],
)
def test_each_filter_keeps_exactly_the_pending_nodes_it_names(mixed, filters, expected):
    expected = set(mixed) if expected is None else expected
    assert _names(mixed, matching_pending(_pending(), filters)) == expected


def test_the_origin_filter_keeps_what_came_from_that_node(mixed):
    found = matching_pending(_pending(), {"origin": str(mixed["session"].pk)})
    assert found == [mixed["turn"].pk]


def test_the_origin_filter_goes_with_the_others(mixed):
    origin = str(mixed["session"].pk)
    assert matching_pending(_pending(), {"origin": origin, "kind": "note"}) == [mixed["turn"].pk]
    assert matching_pending(_pending(), {"origin": origin, "domain": "work"}) == []


def test_a_filter_matches_only_among_the_ids_given_in_id_order_up_to_the_limit(mixed):
    ids = [mixed["work"].pk, mixed["plain"].pk, mixed["import"].pk]
    assert matching_pending(ids, {"words": "tea"}) == sorted(ids)
    assert matching_pending(ids, {"words": "tea"}, limit=2) == sorted(ids)[:2]
    assert matching_pending([], {}) == []


def test_a_decayed_node_matches_no_filter(mixed):
    Node.objects.filter(pk=mixed["work"].pk).update(decayed_at=mixed["work"].created_at)
    assert mixed["work"].pk not in matching_pending([*_pending(), mixed["work"].pk], {})


def test_a_group_is_one_origin_and_domain_with_its_authors_count_oldest_and_reads(lone, make_note):
    session = make_note("A long conversation, its first words.", days_old=50, kind="journal")
    turns = [
        make_note("First turn.", days_old=44, signature="Ann", origins=[{"id": session.pk}]),
        make_note("Second turn.", days_old=42, signature="Bo", origins=[{"id": session.pk}]),
        make_note("Third turn.", days_old=41, signature="Ann", origins=[{"id": session.pk}]),
    ]
    alone = [
        lone("A page by Ann.", days_old=45, signature="Ann"),
        lone("Another by Ann.", days_old=43, signature="Ann"),
        lone("A page by Bo.", days_old=46, signature="Bo"),
    ]
    read(turns[0].pk, actor="agent:scout")  # one read by each speaker: a group sums them
    read(turns[1].pk, actor="agent:scout")
    ids = sorted(t.pk for t in [*turns, *alone, session])
    groups = pending_groups(ids, {})
    of_session = next(g for g in groups if g["origin"] == session.pk)
    assert of_session == {
        "origin": session.pk,
        "origin_label": "A long conversation, its first words.",
        "domain": session.domain,
        "author": "",
        "authors": ["Ann", "Bo"],
        "count": 3,
        "oldest": of_session["oldest"],
        "read": 2,
    }
    assert str(of_session["oldest"])[:10] == turns[0].created_at.isoformat()[:10]
    by_ann = next(g for g in groups if g["origin"] is None and g["author"] == "Ann")
    assert (by_ann["count"], by_ann["authors"], by_ann["read"]) == (2, ["Ann"], 0)
    # Largest first: the session's three, Ann's two, then the ones.
    assert [g["count"] for g in groups] == [3, 2, 1, 1]


def test_groups_of_one_size_come_by_origin_id_and_those_of_no_origin_last(lone, make_note):
    first, second = lone("First session.", days_old=40), lone("Second session.", days_old=40)
    # The first session's two turns are by two speakers, the second's by one: the query's
    # counts then come second session first.
    for speaker in ("Ann", "Bo"):
        make_note(
            f"{speaker} in the first.", days_old=40, signature=speaker, origins=[{"id": first.pk}]
        )
    for i in range(2):
        make_note(
            f"Cy in the second, {i}.", days_old=40, signature="Cy", origins=[{"id": second.pk}]
        )
    lone("Dee's page.", days_old=40, signature="Dee")
    lone("Dee's other page.", days_old=40, signature="Dee")
    groups = pending_groups(_pending(), {})
    assert [(g["origin"], g["count"]) for g in groups[:3]] == [
        (first.pk, 2),
        (second.pk, 2),
        (None, 2),
    ]


def test_a_group_is_labelled_by_its_origins_source_or_its_first_sixty_characters(lone, make_note):
    long = "w" * 80
    unnamed = make_note(long, days_old=40, kind="journal")
    named = lone("Named by its file.", days_old=40, source="notes/tea.md")
    for origin in (unnamed, named):
        make_note(f"A turn on #{origin.pk}.", days_old=40, origins=[{"id": origin.pk}])
    labels = {g["origin"]: g["origin_label"] for g in pending_groups(_pending(), {})}
    assert (labels[unnamed.pk], labels[named.pk]) == ("w" * 60, "notes/tea.md")
    assert labels[None] == ""


def test_groups_and_matches_follow_the_filters_of_each_call(mixed):
    marks = pending_marks()
    all_groups = groups_at(marks, 0, {})
    assert sum(g["count"] for g in all_groups) == len(mixed)
    work = groups_at(marks, 0, {"domain": "work"})
    assert [(g["domain"], g["count"]) for g in work] == [("work", 1)]
    assert matching_at(marks, 0, {"domain": "work"}) == [mixed["work"].pk]
    assert len(matching_at(marks, 0, {}, limit=3)) == 3
    assert matching_at(marks, 0, {}) == sorted(n.pk for n in mixed.values())


def test_groups_at_gives_copies_a_view_may_change(mixed):
    marks = pending_marks()
    first = groups_at(marks, 0, {})
    first[0]["count"] = -1
    first[0]["extra"] = "a view's note"
    again = groups_at(marks, 0, {})
    assert again[0]["count"] > 0 and "extra" not in again[0]
    found = matching_at(marks, 0, {})
    found.clear()
    assert matching_at(marks, 0, {}) == sorted(n.pk for n in mixed.values())


def test_each_horizon_is_asked_for_its_own_pending_nodes(lone):
    old = lone("Pending now.", days_old=40)
    soon = lone("Pending within a week.", days_old=10)
    marks = pending_marks(within_days=7)
    assert matching_at(marks, 0, {}) == [old.pk]
    assert matching_at(marks, 7, {}) == sorted([old.pk, soon.pk])
    assert [g["count"] for g in groups_at(marks, 0, {})] == [1]
    assert sum(g["count"] for g in groups_at(marks, 7, {})) == 2


def test_what_one_graph_state_keeps_worked_out_is_bounded(mixed):
    marks = pending_marks()
    for i in range(_DERIVED_KEPT + 6):
        matching_at(marks, 0, {"words": f"word {i}"})
    assert len(marks.derived) == _DERIVED_KEPT
    assert matching_at(marks, 0, {"words": "tea"}) == sorted(  # worked out, not kept
        mixed[name].pk for name in ("plain", "work", "import", "home", "agent", "turn")
    )


def test_a_sealed_or_rejected_origin_lends_no_words_to_its_group(make_note, owner_client):
    sealed = make_note("The sealed first words of a session.", days_old=40, kind="journal")
    rejected = make_note("The rejected first words of a session.", days_old=40, kind="journal")
    for origin in (sealed, rejected):
        make_note(f"A turn of #{origin.pk}.", days_old=40, origins=[{"id": origin.pk}])
    labels = {g["origin"]: g["origin_label"] for g in pending_groups(_pending(), {})}
    assert labels[sealed.pk] == "The sealed first words of a session."  # before the ceremonies
    seal(sealed.pk, owner="owner")
    reject(rejected.pk, owner="owner", reason="wrong")
    labels = {g["origin"]: g["origin_label"] for g in pending_groups(_pending(), {})}
    assert (labels[sealed.pk], labels[rejected.pk]) == ("", "")
    page = owner_client.get("/review/decays/").content.decode()
    assert "sealed first words" not in page and "rejected first words" not in page


def test_a_rejected_pending_node_answers_no_words_filter(lone):
    page = lone("A rejected page with the word zebra.", days_old=40)
    other = lone("A plain page with the word zebra.", days_old=40)
    assert matching_pending(_pending(), {"words": "zebra"}) == [page.pk, other.pk]
    reject(page.pk, owner="owner", reason="wrong")
    assert page.pk in _pending()  # still pending: rejected is not protected
    assert matching_pending(_pending(), {"words": "zebra"}) == [other.pk]
    groups = pending_groups(_pending(), {"words": "zebra"})
    assert [g["count"] for g in groups] == [1]
    assert matching_pending(_pending(), {}) == [page.pk, other.pk]  # no words asked: listed
