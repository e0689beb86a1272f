from __future__ import annotations

import re

from dashboard.graph import TRUST_COLOURS, neighbourhood
from dashboard.graph_layout import render_svg
from memory.forgetting import let_go
from memory.models import Trust
from review.ceremony import root, seal


def _svg(node, **kwargs) -> str:
    hood = neighbourhood(node.pk, **kwargs)
    return str(render_svg(hood, href=lambda i: f"/node/{i}/", title="test"))


def _child(make_note, parent, body, **fields):
    return make_note(body, origins=[{"id": parent.pk, "relation": "derived_from"}], **fields)


def test_it_puts_one_hop_on_the_inner_ring_and_two_hops_outside(make_note, root_note):
    middle = make_note("Middle.")
    leaf = _child(make_note, middle, "Leaf.")
    hood = neighbourhood(leaf.pk)
    assert hood.nodes[leaf.pk].ring == 0
    assert hood.nodes[middle.pk].ring == 1
    assert hood.nodes[root_note.pk].ring == 2
    assert (leaf.pk, middle.pk, "derived_from") in hood.edges


def test_nodes_are_coloured_by_trust(make_note):
    ground = make_note("Ground truth.")
    root(
        ground.pk,
        adopting_words="I adopt this.",
        expected_body_hash=ground.body_hash,
        owner="owner",
    )
    leaf = _child(make_note, ground, "Says more.")
    svg = _svg(leaf)
    node_tag = re.search(rf'<a href="/node/{ground.pk}/" id="gnode-{ground.pk}"[^>]*>.*?</a>', svg)
    assert node_tag and "trust-ground" in node_tag.group(0)
    assert f'fill="{TRUST_COLOURS[Trust.GROUND]}"' in node_tag.group(0)


def test_decayed_neighbours_appear_faded_only_when_asked(make_note):
    centre = make_note("Centre.")
    gone = _child(make_note, centre, "Faded away.", days_old=30)
    let_go(gone.pk, actor="owner")
    assert gone.pk not in neighbourhood(centre.pk).nodes
    assert neighbourhood(centre.pk).hidden_decayed == 1
    svg = _svg(centre, show_decayed=True)
    assert re.search(rf'id="gnode-{gone.pk}" class="[^"]*\bdecayed\b', svg)


def test_labels_and_titles_are_escaped(make_note):
    centre = make_note("Centre.")
    _child(make_note, centre, '<script>alert(1)</script> "quoted" <img onerror=x>')
    svg = _svg(centre)
    assert "<script>" not in svg and "<img" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg


def test_sealed_neighbours_show_no_words(make_note):
    centre = make_note("Centre.")
    secret = _child(make_note, centre, "Secret neighbour words.")
    seal(secret.pk, owner="owner")
    svg = _svg(centre)
    assert f"sealed #{secret.pk}" in svg
    assert "Secret neighbour" not in svg


def test_each_ring_is_capped_with_a_count_of_the_rest(make_note):
    centre = make_note("Hub.")
    for i in range(15):
        _child(make_note, centre, f"Spoke {i}.")
    hood = neighbourhood(centre.pk, cap=12)
    assert sum(1 for g in hood.nodes.values() if g.ring == 1) == 12
    assert hood.more[1] == 4  # 15 spokes + the root note, 12 drawn
    assert "+4 more" in _svg(centre)


def test_every_node_links_to_its_page(make_note):
    centre = make_note("Centre.")
    leaf = _child(make_note, centre, "Leaf.")
    assert f'<a href="/node/{leaf.pk}/"' in _svg(centre)


def test_as_of_leaves_out_what_did_not_exist_yet(make_note):
    from datetime import timedelta

    centre = make_note("Old centre.", days_old=10)
    leaf = _child(make_note, centre, "New leaf.")
    assert leaf.pk in neighbourhood(centre.pk).nodes
    then = centre.created_at + timedelta(hours=1)
    assert leaf.pk not in neighbourhood(centre.pk, as_of=then).nodes


def _titles(svg: str) -> list[str]:
    return re.findall(r'class="gtitle">([^<]*)<', svg)


def test_titles_alike_are_told_apart_by_the_words_where_they_part(make_note):
    centre = make_note("Doctors.")
    old = _child(make_note, centre, "The owner's doctor is Dr. Alves in Alvalade clinic.")
    new = _child(make_note, centre, "The owner's doctor is Dr. Alves in Campo de Ourique.")
    hood = neighbourhood(centre.pk)
    assert hood.nodes[old.pk].title != hood.nodes[new.pk].title
    assert "Alvalade" in hood.nodes[old.pk].title and "Campo" in hood.nodes[new.pk].title
    drawn = _titles(_svg(centre))
    assert len(drawn) == len(set(drawn))


def test_twins_are_told_apart_by_their_ids(make_note):
    centre = make_note("Bakery.")
    one = _child(make_note, centre, "Bread.", domain="personal")
    two = _child(make_note, centre, "Bread.", domain="work")
    hood = neighbourhood(centre.pk)
    assert {hood.nodes[one.pk].title, hood.nodes[two.pk].title} == {
        f"Bread. #{one.pk}",
        f"Bread. #{two.pk}",
    }


def test_a_more_pill_hangs_from_its_hub(make_note):
    centre = make_note("Hub.")
    for i in range(15):
        _child(make_note, centre, f"Spoke {i}.")
    svg = _svg(centre)
    [link] = re.findall(r'<line x1="([\d.]+)" y1="([\d.]+)"[^>]*class="gpill-link"', svg)
    circle = re.search(rf'id="gnode-{centre.pk}"[^>]*>.*?<circle cx="([\d.]+)" cy="([\d.]+)"', svg)
    assert circle is not None and link == circle.groups()


def test_edges_carry_no_words_and_the_legend_names_every_relation(make_note, owner_client):
    centre = make_note("Centre.")
    _child(make_note, centre, "Leaf.")
    svg = _svg(centre)
    assert not re.search(r'class="gedge[^"]*">(?:(?!</g>).)*<text', svg)  # no words on a line
    page = owner_client.get(f"/node/{centre.pk}/").content.decode()
    legend = page[page.index('id="graph-legend"') :]
    for words in ("came from", "replaces", "next turn", "similar, made by sleep"):
        assert words in legend  # whatever this picture holds


def test_every_link_is_listed_beside_the_picture(make_note, owner_client):
    hub = make_note("A note with many links.")
    targets = [make_note(f"Target {i}.") for i in range(14)]
    from memory.models import Edge

    for target in targets:
        Edge.objects.create(from_node=hub, to_node=target, kind="cites")
    page = owner_client.get(f"/node/{hub.pk}/").content.decode()
    assert neighbourhood(hub.pk).more[1] > 0  # the picture cannot draw them all
    listed = set(map(int, re.findall(r'id="outlink-(\d+)"', page)))
    assert {t.pk for t in targets} <= listed


def test_a_narrow_screen_gets_the_neighbourhood_as_a_list(make_note, owner_client):
    centre = make_note("Centre.")
    leaf = _child(make_note, centre, "Leaf.")
    page = owner_client.get(f"/node/{centre.pk}/").content.decode()
    listing = page[page.index('id="graph-list"') : page.index('id="graph-legend"')]
    assert f'href="/node/{leaf.pk}/"' in listing
