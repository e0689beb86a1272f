"""The hostile suite, scores: recall's scores and their order depend only on what the caller
may see. A word written in another domain, or held only by a sealed or rejected node, leaves
the caller's scores exactly as if it had never been written (both engines)."""

from __future__ import annotations

import pytest

from memory.recall import lexical, recall
from review.ceremony import reject, seal

W, F = "zorblat", "quindle"  # W: the word another writer may also use; F: found nowhere else


@pytest.fixture(autouse=True)
def fresh_counts(monkeypatch):
    """Document counts are cached per database name, which every test shares: start afresh."""
    monkeypatch.setattr(lexical, "_df_cache", {})


def _scores(make_note) -> dict[str, float]:
    """Agent A's view: one node holding W, one holding F, recalled together."""
    w = make_note(f"{W} marmot", domain="personal")
    f = make_note(f"{F} marmot", domain="personal")
    found = {p["id"]: p["score"] for p in recall(f"{W} {F}", scope="both", domains=["personal"])}
    assert {w.pk, f.pk} <= set(found)
    return {"w": found[w.pk], "f": found[f.pk]}


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
