"""The word index's cuts (memory.recall.lexical): which query terms are scored, and how many of
their documents, so a common word's long posting list never sets recall's cost."""

from __future__ import annotations

import pytest

from memory.recall import lexical
from memory.visibility import Visibility
from review.ceremony import seal


def everything() -> Visibility:
    return Visibility.of(domains=None, scope="both", as_of=None)


def test_terms_are_scored_rarest_first_within_the_postings_budget(make_note, monkeypatch):
    make_note("A kestrel hovers over the meadow.")
    for n in range(3):
        make_note(f"The meadow grass grows tall, field {n}.")
    assert lexical.selective_terms(["meadow", "kestrel"], everything()) == ["meadow", "kestrel"]
    monkeypatch.setattr(lexical, "FTS_POSTINGS_BUDGET", 3)
    assert lexical.selective_terms(["meadow", "kestrel"], everything()) == ["kestrel"]


def test_the_rarest_term_is_kept_even_past_the_budget(make_note, monkeypatch):
    for n in range(3):
        make_note(f"The meadow grass grows tall, field {n}.")
    monkeypatch.setattr(lexical, "FTS_POSTINGS_BUDGET", 1)
    assert lexical.selective_terms(["meadow", "absentword"], everything()) == ["meadow"]


@pytest.mark.sqlite_only  # the window walks FTS5's doclists by rowid; PostgreSQL scores all
def test_a_term_past_the_budget_scores_only_its_newest_documents(make_note, monkeypatch):
    notes = [make_note(f"The meadow grass grows tall, field {n}.") for n in range(4)]
    found = {i for i, _ in lexical.fts_candidates(["meadow"], everything(), 10)}
    assert found == {n.pk for n in notes}
    monkeypatch.setattr(lexical, "FTS_POSTINGS_BUDGET", 2)
    found = {i for i, _ in lexical.fts_candidates(["meadow"], everything(), 10)}
    assert found == {notes[2].pk, notes[3].pk}


@pytest.mark.sqlite_only
def test_the_window_still_applies_visibility(make_note, monkeypatch):
    notes = [make_note(f"The meadow grass grows tall, field {n}.") for n in range(4)]
    garden = make_note("The meadow in the garden domain.", domain="garden")
    monkeypatch.setattr(lexical, "FTS_POSTINGS_BUDGET", 3)
    found = {i for i, _ in lexical.fts_candidates(["meadow"], everything(), 10)}
    assert found == {notes[2].pk, notes[3].pk, garden.pk}
    personal = Visibility.of(domains=["personal"], scope="both", as_of=None)
    found = {i for i, _ in lexical.fts_candidates(["meadow"], personal, 10)}
    assert found == {notes[1].pk, notes[2].pk, notes[3].pk}


@pytest.mark.sqlite_only
def test_another_domains_newer_matches_leave_the_callers_window(make_note, monkeypatch):
    notes = [make_note(f"The meadow grass grows tall, field {n}.") for n in range(3)]
    for n in range(5):
        make_note(f"The meadow in the garden, bed {n}.", domain="garden")
    monkeypatch.setattr(lexical, "FTS_POSTINGS_BUDGET", 2)
    personal = Visibility.of(domains=["personal"], scope="both", as_of=None)
    found = {i for i, _ in lexical.fts_candidates(["meadow"], personal, 10)}
    assert found == {notes[1].pk, notes[2].pk}


@pytest.mark.sqlite_only  # the unjoined first pass is FTS5's
def test_a_filter_that_leaves_too_few_of_the_best_is_scored_within(make_note, monkeypatch):
    for n in range(4):
        make_note(f"Meadow {n}.")
    garden = make_note(
        "The meadow in the garden domain, a longer note than the rest.", domain="garden"
    )
    monkeypatch.setattr(lexical, "UNJOINED_FETCH", 1)
    assert garden.pk not in {i for i, _ in lexical.fts_candidates(["meadow"], everything(), 2)}
    only_garden = Visibility.of(domains=["garden"], scope="both", as_of=None)
    assert [i for i, _ in lexical.fts_candidates(["meadow"], only_garden, 2)] == [garden.pk]


@pytest.mark.sqlite_only
def test_a_document_holding_every_term_is_found_outside_the_window(make_note, monkeypatch):
    both = make_note("A heron stands in the meadow.")
    meadows = [make_note(f"The meadow, field {n}.") for n in range(2)]
    for n in range(2):
        make_note(f"A heron, bird {n}.")
    monkeypatch.setattr(lexical, "FTS_POSTINGS_BUDGET", 2)
    assert lexical.selective_terms(["meadow", "heron"], everything()) == ["meadow"]
    found = {i for i, _ in lexical.fts_candidates(["meadow", "heron"], everything(), 10)}
    assert found == {both.pk, *(m.pk for m in meadows)}


@pytest.mark.sqlite_only  # the unjoined first pass is FTS5's
def test_visible_hits_past_the_first_lookups_are_kept_in_order(make_note):
    garden = [make_note(f"Meadow {n}.", domain="garden") for n in range(3)]
    personal = [make_note(f"The meadow grass, a longer note about field {n}.") for n in range(3)]
    best = [i for i, _ in lexical.fts_candidates(["meadow"], everything(), 6)]
    assert set(best[:3]) == {n.pk for n in garden}  # the first three looked up are not visible
    only_personal = Visibility.of(domains=["personal"], scope="both", as_of=None)
    found = [i for i, _ in lexical.fts_candidates(["meadow"], only_personal, 2)]
    assert found == [i for i in best if i in {n.pk for n in personal}][:2]


def test_the_counts_are_the_callers_and_fresh(make_note):
    personal = Visibility.of(domains=["personal"], scope="both", as_of=None)
    kept = make_note("A kestrel hovers over the meadow.")
    make_note("The meadow grass grows tall.", domain="garden")
    sealed = make_note("A sealed meadow note.")
    before = lexical.document_frequencies(["meadow"], personal)
    assert before.df == {"meadow": 2}
    seal(sealed.pk, owner="owner")
    counts = lexical.document_frequencies(["meadow", "kestrel"], personal)
    assert (counts.df, counts.total) == ({"meadow": 1, "kestrel": 1}, before.total - 1)
    assert kept.pk not in counts.hidden and sealed.pk in counts.hidden
