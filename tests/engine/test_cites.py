from __future__ import annotations

import pytest

from memory.cites import open_cites, pend_cite
from memory.errors import Invalid, NotFound
from memory.models import Edge, PendingCite
from memory.scroll import commit_turn


@pytest.fixture(autouse=True)
def scrolls(tmp_path, settings):
    settings.GROVE_SCROLL_DIR = tmp_path


def test_the_holders_next_pair_cites_what_they_read(root_note):
    assert root_note.jurisdiction == "wild"
    pend_cite(holder="agent:scout", node_id=root_note.pk)
    pair = commit_turn(conversation="c", user="u", assistant="a", holder="agent:scout").node
    assert Edge.objects.filter(from_node=pair, to_node=root_note, kind="cites").exists()
    assert PendingCite.objects.get(node=root_note).consumed_by_id == pair.pk
    assert open_cites("agent:scout") == []


def test_only_the_next_pair_cites_and_only_for_that_holder(root_note):
    pend_cite(holder="agent:scout", node_id=root_note.pk)
    other = commit_turn(conversation="c", user="u", assistant="a", holder="agent:other").node
    mine = commit_turn(conversation="c", user="u2", assistant="a2", holder="agent:scout").node
    later = commit_turn(conversation="c", user="u3", assistant="a3", holder="agent:scout").node
    cites = set(Edge.objects.filter(kind="cites").values_list("from_node_id", flat=True))
    assert cites == {mine.pk}
    assert other.pk != mine.pk != later.pk


def test_reading_twice_pends_once(root_note):
    pend_cite(holder="agent:scout", node_id=root_note.pk)
    pend_cite(holder="agent:scout", node_id=root_note.pk)
    assert open_cites("agent:scout") == [root_note.pk]


def test_it_refuses_home_nodes_unknown_nodes_and_blank_holders(make_note):
    with pytest.raises(Invalid, match="home"):
        pend_cite(holder="agent:scout", node_id=make_note("Mine.").pk)
    with pytest.raises(NotFound):
        pend_cite(holder="agent:scout", node_id=999999)
    with pytest.raises(Invalid):
        pend_cite(holder=" ", node_id=1)
    assert not PendingCite.objects.exists()
