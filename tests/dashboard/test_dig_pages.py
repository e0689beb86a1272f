"""The owner's look into the forgotten: /search/'s "Search what was forgotten" mode, its count
of forgotten matches, and /forgotten/'s word search and filters. Inspection: nothing comes back
until the owner presses Restore."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.forgetting import let_go
from memory.models import Event, EventKind, Node
from review.ceremony import seal
from tests._helpers.events import mark


@pytest.fixture
def turns(make_note):
    """Three forgotten turns of one conversation, one of another, and a live note."""
    made = {
        "storm": make_note("Caroline: the lighthouse storm kept us up.", source="conv-26#D3:1"),
        "boat": make_note("Melanie: we took the boat out.", source="conv-26#D3:2"),
        "other": make_note("Jon: the lighthouse tour was great.", source="conv-30#D1:4"),
        "work": make_note("The lighthouse budget.", domain="work", kind="inference"),
    }
    for node in made.values():
        let_go(node.pk, actor="owner")
    made["live"] = make_note("A live lighthouse note.")
    return made


def ids_on(response) -> set[int]:
    return {n["id"] for n in response.context["page"].rows}


def test_search_says_how_many_forgotten_nodes_also_match_and_links_there(owner_client, turns):
    page = owner_client.get("/search/", {"q": "lighthouse"})
    assert page.context["forgotten_matches"] == 3
    assert "3 forgotten nodes also match" in page.text
    assert "/forgotten/?q=lighthouse" in page.text


def test_the_owners_dig_finds_the_forgotten_and_revives_nothing(owner_client, turns):
    page = owner_client.get("/search/", {"q": "lighthouse storm", "forgotten": "1"})
    assert page.context["results"][0]["id"] == turns["storm"].pk
    assert "you let it go" in page.text
    assert Node.objects.filter(decayed_at__isnull=False).count() == 4
    assert not Event.objects.filter(kind__in=[EventKind.REVIVED, EventKind.RESTORED]).exists()


def test_forgotten_word_search_finds_a_turn_and_filters_narrow_it(owner_client, turns):
    assert ids_on(owner_client.get("/forgotten/")) == {
        n.pk for k, n in turns.items() if k != "live"
    }
    found = owner_client.get("/forgotten/", {"q": "lighthouse"})
    assert ids_on(found) == {turns["storm"].pk, turns["other"].pk, turns["work"].pk}
    assert ids_on(owner_client.get("/forgotten/", {"q": "lighthouse", "origin": "conv-26"})) == {
        turns["storm"].pk
    }
    assert ids_on(owner_client.get("/forgotten/", {"q": "lighthouse", "domain": "work"})) == {
        turns["work"].pk
    }
    assert ids_on(owner_client.get("/forgotten/", {"kind": "inference"})) == {turns["work"].pk}


def test_forgotten_filters_by_reason_author_and_when(owner_client, turns, make_note):
    swept = make_note("Swept by sleep.", signature="agent:scout")
    mark(swept, "decayed", at=timezone.now() - timedelta(days=40))
    assert ids_on(owner_client.get("/forgotten/", {"reason": "owner_let_go"})) == {
        n.pk for k, n in turns.items() if k != "live"
    }
    assert ids_on(owner_client.get("/forgotten/", {"author": "agent:scout"})) == {swept.pk}
    old = (timezone.now() - timedelta(days=30)).date().isoformat()
    assert ids_on(owner_client.get("/forgotten/", {"until": old})) == {swept.pk}
    assert swept.pk not in ids_on(owner_client.get("/forgotten/", {"since": old}))


def test_forgotten_word_search_never_matches_sealed_words(owner_client, make_note):
    secret = make_note("The lighthouse code word is albatross.")
    seal(secret.pk, owner="owner")
    mark(secret, "decayed")
    assert secret.pk in ids_on(owner_client.get("/forgotten/"))
    assert ids_on(owner_client.get("/forgotten/", {"q": "albatross"})) == set()
    page = owner_client.get("/search/", {"q": "albatross"})
    assert page.context["forgotten_matches"] == 0


def test_a_bad_when_is_refused_with_400(owner_client, turns):
    assert owner_client.get("/forgotten/", {"since": "yesterday"}).status_code == 400
