"""Dates named in a query (memory/recall/dates.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.recall.dates import spans


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


def test_a_day_in_its_usual_spellings_is_one_day():
    for text in ("on 8 May, 2023", "on 8th May 2023", "on May 8, 2023", "on 2023-05-08"):
        assert spans(text) == [(day(2023, 5, 8), day(2023, 5, 9))], text


def test_a_month_with_its_year_is_the_whole_month():
    assert spans("in April 2022") == [(day(2022, 4, 1), day(2022, 5, 1))]
    assert spans("in Dec 2023") == [(day(2023, 12, 1), day(2024, 1, 1))]


def test_a_day_is_not_also_counted_as_its_month():
    assert spans("What happened on 16 November, 2023?") == [(day(2023, 11, 16), day(2023, 11, 17))]


def test_a_year_alone_or_a_month_alone_is_no_span():
    assert spans("in 2023") == [] and spans("in December") == []
    assert spans("May I ask?") == []


def test_an_impossible_day_is_no_day():
    assert spans("on 2023-02-30") == []
