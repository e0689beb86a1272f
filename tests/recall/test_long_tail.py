"""Visibility in the long tail: where the caller's domain holds few of many matches, what is
its own is still found (past the first screenful, along incoming edges) and nothing else is."""

from __future__ import annotations

import re

from django.urls import reverse

from memory.models import Edge, Node
from memory.recall import recall

HERON = "Heron seen at the weir."
# Longer, so bm25 ranks them below every short one: the tail of the word list.
MINE = "Heron seen again at the old weir this morning, standing in the shallows by the reeds {n}."


def test_search_page_two_holds_the_callers_few_matches_among_many_of_another_domain(
    owner_client, make_note
):
    for n in range(180):
        make_note(f"{HERON} {n}", domain="work")
    mine = {make_note(MINE.format(n=n)).pk for n in range(25)}
    everywhere = recall("heron weir", scope="both", limit=25)
    assert not mine & {p["id"] for p in everywhere}  # the others outrank every one of mine
    page = owner_client.get(reverse("search"), {"q": "heron weir", "domain": "personal", "page": 2})
    shown = {int(i) for i in re.findall(r'id="result-(\d+)"', page.text)}
    assert shown == mine


def test_recall_lifts_the_callers_one_neighbour_along_incoming_edges_among_many_foreign(
    make_note, lone
):
    seed = lone("Quillwort grows by the lighthouse steps.", domain="personal")
    for n in range(60):
        other = make_note(f"Work memo {n}.", domain="work")
        Edge.objects.create(from_node=other, to_node=seed, kind="cites", created_by="fixture")
    mine = make_note("Remember the steps.", origins=[{"id": seed.pk, "relation": "cites"}])
    found = [p["id"] for p in recall("quillwort", scope="both", domains=["personal"])]
    assert found == [seed.pk, mine.pk]
    everyone = [p["id"] for p in recall("quillwort", scope="both", limit=100)]
    assert len(everyone) == 62  # the foreign ones are there for a caller who may see them


def _recent(client, **params) -> set[int]:
    response = client.get(reverse("search"), params)
    assert response.status_code == 200
    return {int(i) for i in re.findall(r'id="recent-(\d+)"', response.text)}


def test_the_empty_query_list_keeps_to_the_scope_and_domain_asked(owner_client, make_note, lone):
    home, wild = make_note("At home."), lone("In the wild.")
    work = make_note("At work.", domain="work")
    assert {home.pk, wild.pk, work.pk} <= _recent(owner_client)
    assert wild.pk in _recent(owner_client, scope="wild")
    assert not {home.pk, work.pk} & _recent(owner_client, scope="wild")
    assert _recent(owner_client, domain="work") == {work.pk}
    assert _recent(owner_client, scope="wild", domain="work") == set()


def test_the_empty_query_list_as_of_a_time_is_what_was_written_and_live_then(
    owner_client, make_note
):
    from datetime import timedelta

    import time_machine
    from django.utils import timezone

    from memory.forgetting import let_go, restore

    with time_machine.travel(timezone.now() - timedelta(days=10)):
        old = make_note("Written long ago.")
        gone = make_note("Let go long ago.")
        let_go(gone.pk, actor="owner")
        back = make_note("Let go, then restored today.")
        let_go(back.pk, actor="owner")
    then = timezone.now() - timedelta(days=5)
    later = make_note("Written after the instant.")
    restore(back.pk, actor="owner")
    at = {"as_of": then.isoformat()}
    assert later.pk in _recent(owner_client) and back.pk in _recent(owner_client)
    assert old.pk in _recent(owner_client, **at)
    assert not {later.pk, gone.pk, back.pk} & _recent(owner_client, **at)
    assert Node.objects.get(pk=back.pk).decayed_at is None


def test_the_empty_query_list_as_of_a_time_looks_past_a_batch_of_nodes_dead_then(
    owner_client, make_note
):
    from datetime import timedelta

    from django.utils import timezone

    from dashboard.search_views import _RECENT_BATCH
    from tests._helpers.events import mark

    old = make_note("The one live then, older than all the rest.", days_old=3)
    for n in range(_RECENT_BATCH + 1):
        mark(make_note(f"Let go before the instant {n}.", days_old=2), "decayed")
    at = {"as_of": (timezone.now() + timedelta(seconds=1)).isoformat()}
    assert old.pk in _recent(owner_client, **at)
