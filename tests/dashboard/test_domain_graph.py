"""The graph view: one domain as a picture, filtered, zoomed and panned by plain links."""

from __future__ import annotations

import re

from dashboard.domain_graph import domain_picture
from memory.forgetting import let_go
from memory.models import Node
from review.ceremony import seal
from tests._helpers.acts import root_as_owner


def _child(make_note, parent, body, **fields):
    return make_note(body, origins=[{"id": parent.pk, "relation": "derived_from"}], **fields)


def _drawn(page: str) -> set[int]:
    return set(map(int, re.findall(r'id="gnode-(\d+)"', page)))


def test_it_draws_one_domain_best_linked_first(make_note):
    hub = make_note("A hub of the work domain.", domain="work")
    spokes = [_child(make_note, hub, f"Spoke {i}.", domain="work") for i in range(4)]
    make_note("A personal note.", domain="personal")
    picked = domain_picture("work", size=50)
    assert set(picked.hood.nodes) == {hub.pk, *(s.pk for s in spokes)}
    assert picked.hood.nodes[hub.pk].ring == 1  # the best-linked is drawn largest
    assert len(domain_picture("work", size=50).hood.edges) == 4


def test_the_size_draws_the_best_linked_and_counts_the_rest(make_note):
    hub = make_note("Hub.", domain="work")
    for i in range(60):
        _child(make_note, hub, f"Spoke {i}.", domain="work")
    picked = domain_picture("work", size=50)
    assert hub.pk in picked.hood.nodes and len(picked.hood.nodes) == 50
    assert picked.matching == 61 and picked.hood.more[1] == 11


def test_filters_and_hidden_links_narrow_the_picture(make_note):
    ground = make_note("True thing.", domain="work")
    root_as_owner(ground)
    other = _child(make_note, ground, "Unreviewed thing.", domain="work")
    assert set(domain_picture("work").hood.nodes) >= {ground.pk, other.pk}  # both there first
    assert set(domain_picture("work", trust="ground").hood.nodes) == {ground.pk}
    assert domain_picture("work").hood.edges
    assert domain_picture("work", hide=["derived_from"]).hood.edges == []


def test_decayed_nodes_are_left_out_and_sealed_words_never_shown(make_note, owner_client):
    gone = make_note("Forgotten words.", domain="work", days_old=30)
    let_go(gone.pk, actor="owner")
    secret = make_note("The sealed words.", domain="work")
    seal(secret.pk, owner="owner")
    page = owner_client.get("/graph/", {"domain": "work"}).content.decode()
    assert Node.objects.filter(pk=gone.pk, decayed_at__isnull=False).exists()
    assert gone.pk not in _drawn(page) and "Forgotten words" not in page
    assert "The sealed words" not in page


def test_the_page_zooms_and_pans_with_plain_links(make_note, owner_client):
    make_note("Something to draw.", domain="work")
    page = owner_client.get("/graph/", {"domain": "work"}).content.decode()
    zoom_in = re.search(r'href="([^"]+)" id="zoom-in"', page)
    assert zoom_in is not None and 'id="zoom-out"' not in page
    zoomed = owner_client.get("/graph/" + zoom_in.group(1).replace("&amp;", "&"))
    text = zoomed.content.decode()
    assert 'viewBox="250.0 155.0 500.0 310.0"' in text  # the middle half of the picture
    assert 'id="zoom-out"' in text and 'aria-label="Pan left"' in text


def test_bad_parameters_fall_back_instead_of_failing(make_note, owner_client):
    make_note("Something to draw.", domain="work")
    answer = owner_client.get(
        "/graph/", {"domain": "nowhere", "zoom": "9", "cx": "nan", "size": "-1", "hide": "x"}
    )
    assert answer.status_code == 200
