"""The pending page's marks kept between views (memory/forgetting.py pending_marks, keyed by
reach.fingerprint): a second view of an unchanged graph marks nothing, and every change to what
the mark reads (an event, an agent's first read, a new edge, a node coming of age) is seen at
once."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from memory import forgetting, reach
from memory.models import Edge
from memory.read import read


@pytest.fixture
def marked(monkeypatch) -> list[int]:
    """How many times the graph was marked."""
    calls: list[int] = []
    real = reach.marks

    def counting(cutoffs):
        calls.append(1)
        return real(cutoffs)

    monkeypatch.setattr(reach, "marks", counting)
    return calls


def pending() -> list[int]:
    return forgetting.pending_marks(within_days=7).at(0)


def test_a_second_view_of_an_unchanged_graph_marks_nothing(lone, marked):
    old = lone("Old and unread.", days_old=40)
    assert pending() == [old.pk] and pending() == [old.pk]
    assert len(marked) == 1


def test_a_keep_is_seen_by_the_next_view(lone):
    old = lone("Old and unread.", days_old=40)
    assert pending() == [old.pk]
    forgetting.keep(old.pk, actor="owner")
    assert pending() == []


def test_an_agents_first_read_is_seen_by_the_next_view(lone):
    old, other = lone("Old and unread.", days_old=40), lone("Old too.", days_old=40)
    assert pending() == [old.pk, other.pk]
    read(old.pk, actor="agent:reader")  # a read writes no event
    assert pending() == [other.pk]


def test_a_new_holding_edge_is_seen_by_the_next_view(lone):
    old, young = lone("Old and unread.", days_old=40), lone("Young: a root.")
    assert pending() == [old.pk]
    Edge.objects.create(from_node=young, to_node=old, kind="cites", created_by="owner")
    assert pending() == []


def test_a_node_coming_of_age_is_seen_by_the_next_view(lone, settings):
    settings.GROVE_DECAY_MIN_AGE_DAYS = 14
    old, nearly = lone("Old.", days_old=40), lone("Of age in an hour.", days_old=14 - 1 / 24)
    assert pending() == [old.pk]
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        assert pending() == [old.pk, nearly.pk]
    assert pending() == [old.pk]  # and back again when the clock is


def test_a_kept_mark_answers_at_the_clock_of_the_view(lone):
    lone("Old and unread.", days_old=40)
    first = forgetting.pending_marks()
    later = timezone.now() + timedelta(minutes=5)
    assert forgetting.pending_marks(now=later).now == later != first.now


def test_the_marks_of_two_graph_states_are_kept_and_no_more(lone, marked):
    forgetting._kept.clear()
    for i in range(3):
        lone(f"Old page {i}.", days_old=40)
        pending()
    assert len(marked) == 3  # three states, each marked once
    assert len(forgetting._kept) == forgetting._KEPT_STATES == 2
    pending()
    assert len(marked) == 3  # the last state is among the kept


def test_the_within_mark_is_the_next_sleeps_unless_a_horizon_is_asked(lone):
    old, soon = lone("Pending now.", days_old=40), lone("Of age in four days.", days_old=10)
    half = lone("Of age in half a day.", days_old=13.5)
    lone("Of age in six days.", days_old=8)  # within the 7-day tab, not within 5 days
    marks = forgetting.pending_marks()
    assert marks.within_days == 0 and marks.within is marks.horizons[0]  # not marked twice
    listed = forgetting.pending_decays(marks=forgetting.pending_marks(within_days=5))
    assert [(i["id"], i["eligible_now"]) for i in listed] == [
        (old.pk, True),
        (half.pk, False),
        (soon.pk, False),
    ]
    listed = forgetting.pending_decays(marks=forgetting.pending_marks(within_days=1))
    assert [i["id"] for i in listed] == [old.pk, half.pk]
