"""The hostile suite, scores: recall's scores and their order depend only on what the caller
may see. A word written in another domain, or held only by a sealed or rejected node, leaves
the caller's scores exactly as if it had never been written (both engines)."""

from __future__ import annotations

import pytest

from memory.recall import recall
from review.ceremony import reject, seal

W, F = "zorblat", "quindle"  # W: the word another writer may also use; F: found nowhere else


def _scores(make_note) -> dict[str, float]:
    """Agent A's view: one node holding W, one holding F, recalled together."""
    w = make_note(f"{W} marmot", domain="personal")
    f = make_note(f"{F} marmot", domain="personal")
    return _recalled(w.pk, f.pk)


def _recalled(w: int, f: int) -> dict[str, float]:
    found = {p["id"]: p["score"] for p in recall(f"{W} {F}", scope="both", domains=["personal"])}
    assert {w, f} <= set(found)
    return {"w": found[w], "f": found[f]}


def test_scores_are_equal_when_no_one_else_wrote_the_word(make_note):
    scores = _scores(make_note)
    assert scores["w"] == scores["f"]


def test_another_domains_word_changes_no_score(make_note):
    make_note(f"beta only word {W}", domain="work")
    scores = _scores(make_note)
    assert scores["w"] == scores["f"]


@pytest.mark.parametrize("hide", ["seal", "reject"])
def test_a_hidden_nodes_word_changes_no_score(make_note, hide):
    hidden = make_note(f"hidden words {W} here", domain="personal")
    if hide == "seal":
        seal(hidden.pk, owner="owner")
    else:
        reject(hidden.pk, owner="owner", reason="false")
    scores = _scores(make_note)
    assert scores["w"] == scores["f"]


def test_a_word_another_domain_made_common_is_neither_cut_nor_moves_a_score(make_note):
    w = make_note(f"{W} marmot", domain="personal")
    f = make_note(f"{F} marmot", domain="personal")
    alone = _recalled(w.pk, f.pk)
    for n in range(60):  # W in nearly every document of the index, none of them the caller's
        make_note(f"beta {W} number {n}", domain="work")
    common = _recalled(w.pk, f.pk)
    assert common == pytest.approx(alone, rel=1e-12)
    assert common["w"] == common["f"]
