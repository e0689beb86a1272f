"""Pending decays at scale: grouped by what goes together, horizons with counts, and keep or
let go by filter, behind a confirmation, as one batch with its undo."""

from __future__ import annotations

import pytest

from memory.models import Event, Node


@pytest.fixture
def sessions(lone, make_note):
    """Two old sessions nobody read: three turns derived from one, two from the other."""
    one, two = lone("Session one.", days_old=40), lone("Session two.", days_old=40)
    turns = {one.pk: [], two.pk: []}
    for origin, n in ((one, 3), (two, 2)):
        for i in range(n):
            turn = make_note(f"Turn {i} of {origin.body}", days_old=40, origins=[{"id": origin.pk}])
            turns[origin.pk].append(turn.pk)
    return turns


def test_pending_decays_are_grouped_by_the_node_they_came_from(owner_client, sessions):
    response = owner_client.get("/review/decays/")
    groups = {g["origin"]: g["count"] for g in response.context["decay_groups"]}
    assert {k: groups[k] for k in sessions} == {k: len(v) for k, v in sessions.items()}
    assert "3 nodes, none read since they arrived 40 days ago" in response.content.decode()


def test_a_session_of_two_speakers_is_one_group_naming_both(owner_client, lone, make_note):
    session = lone("A conversation's session.", days_old=40)
    for i, speaker in enumerate(("Caroline", "Melanie", "Caroline")):
        make_note(f"Turn {i}.", days_old=40, signature=speaker, origins=[{"id": session.pk}])
    lone("Not from it.", days_old=40, signature="Melanie")
    groups = owner_client.get("/review/decays/").context["decay_groups"]
    of_session = [g for g in groups if g["origin"] == session.pk]
    assert [(g["count"], g["authors"]) for g in of_session] == [(3, ["Caroline", "Melanie"])]
    alone = [g for g in groups if g["origin"] is None and g["author"] == "Melanie"]
    assert [g["count"] for g in alone] == [1]  # with no origin, the author still groups
    assert "Caroline, Melanie" in owner_client.get("/review/decays/").content.decode()


def test_the_horizon_tabs_count_what_each_would_collect(owner_client, sessions, lone):
    lone("Young, collected within a week.", days_old=10)
    tabs = dict(owner_client.get("/review/decays/").context["horizons"])
    assert tabs[0] == 7 and tabs[7] == 8


def test_keep_all_of_a_group_asks_first_then_keeps_that_group_only(owner_client, sessions):
    origin = next(iter(sessions))
    ask = owner_client.get(f"/review/decays/bulk/?act=keep&origin={origin}")
    assert ask.status_code == 200 and "Keep 3 nodes?" in ask.content.decode()
    assert not Event.objects.filter(kind="kept").exists()
    done = owner_client.post(
        "/review/decays/bulk/", {"act": "keep", "origin": origin, "confirmed": "yes"}
    )
    assert done.status_code == 302 and f"origin={origin}" in done["Location"]
    assert set(Event.objects.filter(kind="kept").values_list("node_id", flat=True)) == set(
        sessions[origin]
    )


def test_let_go_by_filter_is_one_batch_undone_from_the_page(owner_client, sessions):
    done = owner_client.post(
        "/review/decays/bulk/", {"act": "let_go", "words": "Turn", "confirmed": "yes"}
    )
    turns = [i for ids in sessions.values() for i in ids]
    assert Node.objects.filter(pk__in=turns, decayed_at__isnull=False).count() == 5
    batch = done["Location"].split("batch=")[1].split("&")[0]
    page = owner_client.get(done["Location"])
    assert f"/review/batches/{batch}/undo/" in page.content.decode()
    owner_client.post(f"/review/batches/{batch}/undo/", {"next": "/review/decays/"})
    assert Node.objects.filter(pk__in=turns, decayed_at__isnull=True).count() == 5
