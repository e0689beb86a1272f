"""The node page (dashboard/node_views.py): a read, the four axes, clocks, sealed and decayed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.forgetting import let_go
from memory.models import Node
from memory.read import read
from review.ceremony import root, seal


def test_the_node_page_redirects_to_login_when_signed_out(client, make_note):
    assert client.get(f"/node/{make_note('Private.').pk}/").status_code == 302


def test_owner_page_views_leave_access_counts_unchanged(owner_client, make_note):
    node = make_note("Look at me as often as you like.")
    for _ in range(6):
        response = owner_client.get(f"/node/{node.pk}/")
        assert response.status_code == 200
    node.refresh_from_db()
    assert node.access_count == 0 and node.read_days == 0 and node.last_accessed_at is None
    assert node.last_read_by == ""
    body = response.content.decode()
    assert "Look at me as often as you like." in body
    assert "home (made here)" in body and "unreviewed" in body and ">live<" in body


def test_the_node_page_says_what_holds_a_live_node(owner_client, make_note):
    origin = make_note("An old origin.", days_old=40)
    child = make_note("Read by an agent.", days_old=40, origins=[{"id": origin.pk}])
    read(child.pk, actor="agent:scout")
    body = owner_client.get(f"/node/{origin.pk}/").content.decode()
    assert f"#{child.pk}</a> (derived_from) ← read 1 time on 1 day, last by agent:scout" in body
    body = owner_client.get(f"/node/{child.pk}/").content.decode()
    assert "It holds itself: read 1 time on 1 day, last by agent:scout." in body


def test_viewing_a_live_node_shows_its_body(owner_client, make_note):
    node = make_note("Read me and I stay.")
    response = owner_client.get(f"/node/{node.pk}/")
    body = response.content.decode()
    assert "Read me and I stay." in body
    assert "home (made here)" in body and "unreviewed" in body and ">live<" in body


def test_it_shows_both_clocks(owner_client, make_note):
    node = make_note("Dated.", referent_time="2020-02-03T04:05:00Z")
    undated = make_note("Undated.")
    assert "2020-02-03 04:05 UTC" in owner_client.get(f"/node/{node.pk}/").content.decode()
    body = owner_client.get(f"/node/{undated.pk}/").content.decode()
    assert "Event clock</dt><dd>unknown" in body


def test_a_decayed_node_is_shown_marked_and_not_counted(owner_client, make_note):
    node = make_note("Faded but on record.", days_old=30)
    let_go(node.pk, actor="owner")
    body = owner_client.get(f"/node/{node.pk}/").content.decode()
    assert "Faded but on record." in body and "decayed-banner" in body
    assert Node.objects.get(pk=node.pk).access_count == 0


def test_a_sealed_node_shows_nothing_but_sealed(owner_client, make_note):
    node = make_note("Nobody may see these words.")
    seal(node.pk, owner="owner")
    body = owner_client.get(f"/node/{node.pk}/").content.decode()
    assert f"sealed #{node.pk}" in body
    assert "Nobody may see" not in body and node.body_hash not in body
    assert Node.objects.get(pk=node.pk).access_count == 0


def test_it_links_review_actions_by_trust(owner_client, make_note):
    node = make_note("Root me.")
    assert f"/review/{node.pk}/root/" in owner_client.get(f"/node/{node.pk}/").content.decode()
    root(node.pk, adopting_words="I adopt this.", expected_body_hash=node.body_hash, owner="owner")
    body = owner_client.get(f"/node/{node.pk}/").content.decode()
    assert f"/review/{node.pk}/supersede/" in body and f"/review/{node.pk}/root/" not in body


def test_it_shows_events_authority_and_the_picture(owner_client, make_note, root_note):
    node = make_note("Rooted and drawn.")
    root(node.pk, adopting_words="I adopt this.", expected_body_hash=node.body_hash, owner="owner")
    body = owner_client.get(f"/node/{node.pk}/").content.decode()
    assert 'class="tag kind-rooted"' in body
    assert '<svg class="graph"' in body and f'id="gnode-{root_note.pk}"' in body


def test_the_decayed_toggle_shows_faded_neighbours(owner_client, make_note):
    centre = make_note("Centre.")
    gone = make_note("Gone.", days_old=30, origins=[{"id": centre.pk, "relation": "derived_from"}])
    let_go(gone.pk, actor="owner")
    assert f'id="gnode-{gone.pk}"' not in owner_client.get(f"/node/{centre.pk}/").content.decode()
    body = owner_client.get(f"/node/{centre.pk}/?decayed=1").content.decode()
    assert f'id="gnode-{gone.pk}"' in body
    assert f'href="/node/{gone.pk}/?decayed=1"' in body  # the toggle follows the walk


def test_as_of_shows_lifecycle_then_and_counts_nothing(owner_client, make_note):
    node = make_note("Alive then, gone now.", days_old=5)
    let_go(node.pk, actor="owner")
    then = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    response = owner_client.get(f"/node/{node.pk}/", {"as_of": then})
    body = response.content.decode()
    assert 'id="node-lifecycle">live<' in body and "asof-banner" in body
    assert response.context["later_events"] == 1  # the decay, after the as-of time
    assert Node.objects.get(pk=node.pk).access_count == 0


def test_as_of_before_the_node_existed_is_not_found(owner_client, make_note):
    node = make_note("Brand new.")
    then = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    response = owner_client.get(f"/node/{node.pk}/", {"as_of": then})
    assert response.status_code == 404
    assert "did not exist yet" in response.content.decode()


def test_an_unknown_node_is_404(owner_client, db):
    assert owner_client.get("/node/999999/").status_code == 404


def test_hostile_bodies_are_escaped(owner_client, make_note):
    node = make_note('<script>alert(1)</script><img src=x onerror="alert(2)">')
    body = owner_client.get(f"/node/{node.pk}/").content.decode()
    assert "<script>alert(1)" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_a_ground_pair_is_offered_no_supersede_anywhere(owner_client, db, tmp_path, settings):
    from memory.errors import Invalid
    from memory.scroll import commit_turn
    from tests._helpers.acts import root_as_owner, supersede_as_owner

    settings.GROVE_SCROLL_DIR = tmp_path
    pair = commit_turn(conversation="c", user="Where is the key?", assistant="Under the pot.").node
    root_as_owner(pair)
    with pytest.raises(Invalid):  # the act refuses it ...
        supersede_as_owner(pair, "Under the blue pot.")
    for page in (f"/node/{pair.pk}/", f"/review/{pair.pk}/"):  # ... so no page offers it
        response = owner_client.get(page)
        assert response.status_code == 200
        assert f"/review/{pair.pk}/supersede/" not in response.content.decode()


def test_a_ground_note_links_to_its_supersede_screen(owner_client, make_note):
    from tests._helpers.acts import root_as_owner

    note = make_note("The key is under the pot.")
    root_as_owner(note)
    body = owner_client.get(f"/node/{note.pk}/").content.decode()
    assert f'href="/review/{note.pk}/supersede/"' in body
    assert f"/review/{note.pk}/root/" not in body
