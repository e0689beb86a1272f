from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from django.utils import timezone

from memory.errors import Conflict, Invalid, NotFound
from memory.models import Edge, Event, Node, Trust
from memory.questions import (
    answer,
    feed,
    is_open,
    open_among,
    open_questions_near,
    plant_question,
    reopen,
)
from memory.trust import trust_of
from review.ceremony import reject, seal


@pytest.fixture
def topic(make_note):
    return make_note("The boiler makes a knocking noise.")


def _ask(topic, body="Why does the boiler knock?"):
    return plant_question(body, about=[topic.pk], signature="owner", domain="personal")


def test_plant_writes_a_question_asking_about_its_nodes(topic):
    question = _ask(topic)
    assert (question.kind, question.jurisdiction) == ("question", "home")
    assert Edge.objects.filter(from_node=question, to_node=topic, kind="asks_about").exists()


def test_plant_refuses_no_subject_and_other_domains(topic, make_note):
    with pytest.raises(Invalid):
        plant_question("Why?", about=[], signature="owner")
    work = make_note("Quarterly numbers.", domain="work")
    with pytest.raises(NotFound):
        plant_question("Why?", about=[work.pk], signature="owner", domain="personal")


def test_feed_answer_and_reopen_write_edges_toward_the_question(topic, make_note):
    question = _ask(topic)
    clue = make_note("The knocking started after the pressure drop.")
    fix = make_note("Topping up the pressure stopped the knocking.")
    later = make_note("It knocks again in the cold.")
    feed(question.pk, clue.pk, actor="owner")
    answer(question.pk, fix.pk, actor="owner")
    reopen(question.pk, actor="owner", by_node_id=later.pk)
    kinds = set(Edge.objects.filter(to_node=question).values_list("from_node_id", "kind"))
    assert kinds == {(clue.pk, "feeds"), (fix.pk, "answers"), (later.pk, "reopens")}


def test_a_question_is_open_until_answered_and_open_again_when_reopened(topic, make_note):
    question = _ask(topic)
    assert is_open(question.pk)
    answer(question.pk, make_note("Air in the pipes.").pk, actor="owner")
    assert not is_open(question.pk)
    reopen(question.pk, actor="owner", by_node_id=make_note("Still knocks.").pk)
    assert is_open(question.pk)
    answer(question.pk, make_note("The pump bearing was worn.").pk, actor="owner")
    assert not is_open(question.pk)


def test_the_same_node_cannot_answer_twice(topic, make_note):
    question = _ask(topic)
    fix = make_note("Air in the pipes.")
    answer(question.pk, fix.pk, actor="owner")
    reopen(question.pk, actor="owner", by_node_id=make_note("Still knocks.").pk)
    with pytest.raises(Conflict, match="already answered"):
        answer(question.pk, fix.pk, actor="owner")


def test_answering_never_makes_anything_ground(topic, make_note):
    question = _ask(topic)
    fix = make_note("Air in the pipes.")
    answer(question.pk, fix.pk, actor="agent:helper")
    assert {trust_of(question.pk), trust_of(fix.pk), trust_of(topic.pk)} == {Trust.UNREVIEWED}
    assert not Event.objects.filter(kind="rooted").exists()


def test_feed_refuses_a_non_question_and_a_self_link(topic, make_note):
    with pytest.raises(Invalid, match="not a question"):
        feed(topic.pk, make_note("x").pk, actor="owner")
    question = _ask(topic)
    with pytest.raises(Invalid):
        feed(question.pk, question.pk, actor="owner")


def test_open_questions_near_are_ranked_by_distinct_feeders(topic, make_note):
    many = _ask(topic, "Is it the pressure?")
    few = _ask(topic, "Is it the pump?")  # the newer: only the feeders put it second
    for i in range(3):
        feed(many.pk, make_note(f"Pressure clue {i}.").pk, actor="owner")
    feed(few.pk, make_note("Pump clue.").pk, actor="owner")
    near = open_questions_near([topic.pk])
    assert [(q["id"], q["feeders"]) for q in near] == [(many.pk, 3), (few.pk, 1)]


def test_open_questions_near_leave_out_answered_sealed_and_far_ones(topic, make_note):
    answered = _ask(topic, "Answered?")
    sealed = _ask(topic, "Sealed?")
    far = plant_question("Far?", about=[make_note("Elsewhere.").pk], signature="owner")
    kept = _ask(topic, "Still open?")
    answer(answered.pk, make_note("Yes.").pk, actor="owner")
    seal(sealed.pk, owner="owner")
    ids = [q["id"] for q in open_questions_near([topic.pk])]
    assert ids == [kept.pk]
    assert far.pk not in ids


def test_a_question_fed_by_a_node_is_near_it(topic, make_note):
    question = _ask(topic)
    clue = make_note("A clue.")
    feed(question.pk, clue.pk, actor="owner")
    assert [q["id"] for q in open_questions_near([clue.pk])] == [question.pk]


@pytest.mark.parametrize("link", [feed, answer])
def test_a_node_of_another_domain_can_neither_feed_nor_answer(topic, make_note, link):
    question = _ask(topic)
    work = make_note("The work boiler was serviced.", domain="work")
    same = make_note("The home boiler was serviced.", domain="personal")
    with pytest.raises(NotFound, match="not found in domain 'personal'"):
        link(question.pk, work.pk, actor="agent:a")
    assert not Edge.objects.filter(from_node=work, to_node=question).exists()
    link(question.pk, same.pk, actor="agent:a")  # the same call within the domain links
    assert Edge.objects.filter(from_node=same, to_node=question).exists()


def test_a_node_of_another_domain_cannot_reopen(topic, make_note):
    question = _ask(topic)
    answer(question.pk, make_note("It needs bleeding.").pk, actor="agent:a")
    work = make_note("A work note.", domain="work")
    with pytest.raises(NotFound):
        reopen(question.pk, actor="agent:a", by_node_id=work.pk)
    assert not is_open(question.pk)


def test_refusals_name_their_codes_and_say_why(topic, make_note):
    question = _ask(topic)
    note = make_note("x")
    refusals = [
        (
            lambda: plant_question("Why?", about=[], signature="owner"),
            "no_origin",
            "a question must be about at least one node",
        ),
        (
            lambda: feed(topic.pk, note.pk, actor="owner"),
            "not_question",
            f"node {topic.pk} is a note, not a question",
        ),
        (
            lambda: feed(question.pk, question.pk, actor="owner"),
            "self_loop",
            "a question cannot link to itself",
        ),
        (lambda: answer(question.pk, topic.pk, actor="  "), "no_actor", "say who links this"),
    ]
    for call, code, words in refusals:
        with pytest.raises(Invalid) as refused:
            call()
        assert (refused.value.code, str(refused.value)) == (code, words)


@pytest.mark.parametrize(
    ("link", "words"),
    [
        (lambda q, n: feed(q, n, actor="owner"), "node {n} already feeds question {q}"),
        (lambda q, n: answer(q, n, actor="owner"), "node {n} already answered question {q}"),
        (
            lambda q, n: reopen(q, actor="owner", by_node_id=n),
            "node {n} already reopened question {q}",
        ),
    ],
)
def test_a_second_link_of_one_kind_is_refused_in_words(topic, link, words):
    question = _ask(topic)
    link(question.pk, topic.pk)
    with pytest.raises(Conflict) as again:
        link(question.pk, topic.pk)
    assert again.value.code == "already_linked"
    assert str(again.value) == words.format(n=topic.pk, q=question.pk)


def test_refusals_say_what_was_not_found(topic):
    with pytest.raises(NotFound, match=r"node\(s\) \[999999\] not found in domain 'personal'"):
        plant_question("Why?", about=[999999], signature="owner")
    with pytest.raises(NotFound, match="question 999999 not found"):
        feed(999999, topic.pk, actor="owner")
    with pytest.raises(NotFound, match="node 999999 not found"):
        feed(_ask(topic).pk, 999999, actor="owner")


def test_the_link_records_who_made_it_without_spaces(topic, make_note):
    edge = feed(_ask(topic).pk, make_note("A clue.").pk, actor="  agent:helper ")
    assert Edge.objects.get(pk=edge.pk).created_by == "agent:helper"


def test_an_answer_and_a_reopening_at_one_instant_leave_the_question_open(topic, make_note):
    question = _ask(topic)
    fix, doubt = make_note("Air in the pipes."), make_note("Still knocks.")
    with time_machine.travel(datetime(2026, 3, 1, 12, tzinfo=UTC), tick=False):
        answer(question.pk, fix.pk, actor="owner")
        reopen(question.pk, actor="owner", by_node_id=doubt.pk)
    assert is_open(question.pk) and open_among([question.pk]) == {question.pk}


def test_open_among_names_only_the_open_ones(topic, make_note):
    still, done = _ask(topic, "Still?"), _ask(topic, "Done?")
    answer(done.pk, make_note("Yes.").pk, actor="owner")
    assert open_among([still.pk, done.pk, topic.pk]) == {still.pk}


def test_open_questions_near_leave_out_decayed_and_rejected_questions(topic, make_note):
    gone, false, kept = _ask(topic, "Gone?"), _ask(topic, "False?"), _ask(topic, "Kept?")
    Node.objects.filter(pk=gone.pk).update(decayed_at=timezone.now())
    reject(false.pk, owner="owner", reason="a wrong question")
    assert [q["id"] for q in open_questions_near([topic.pk])] == [kept.pk]


def test_open_questions_near_count_only_live_feeding_nodes(topic, make_note):
    question = _ask(topic)
    live, gone = make_note("A live clue."), make_note("A clue let go.")
    feed(question.pk, live.pk, actor="owner")
    feed(question.pk, gone.pk, actor="owner")
    answer(question.pk, make_note("An answer.").pk, actor="owner")
    reopen(question.pk, actor="owner", by_node_id=make_note("A doubt.").pk)
    Node.objects.filter(pk=gone.pk).update(decayed_at=timezone.now())
    assert [q["feeders"] for q in open_questions_near([topic.pk])] == [1]  # not its answer


def test_open_questions_near_keep_to_the_domains_asked(topic, make_note):
    home = _ask(topic)
    work_topic = make_note("The office boiler.", domain="work")
    work = plant_question("Why?", about=[work_topic.pk], signature="owner", domain="work")
    near = [topic.pk, work_topic.pk]
    assert [q["id"] for q in open_questions_near(near, domains=["work"])] == [work.pk]
    assert {q["id"] for q in open_questions_near(near)} == {home.pk, work.pk}


def test_open_questions_near_rank_ties_newest_first_and_stop_at_the_limit(topic):
    asked = [_ask(topic, f"Question {i}?") for i in range(11)]
    newest_first = [q.pk for q in reversed(asked)]
    assert [q["id"] for q in open_questions_near([topic.pk])] == newest_first[:10]
    assert [q["id"] for q in open_questions_near([topic.pk], limit=2)] == newest_first[:2]
    assert open_questions_near([topic.pk], limit=0) == []


def test_open_questions_near_preview_the_question(topic):
    question = _ask(topic, "Why " + "really " * 40 + "?")
    (row,) = open_questions_near([topic.pk])
    assert row == {
        "jurisdiction": "home",
        "id": question.pk,
        "trust": Trust.UNREVIEWED,
        "kind": "question",
        "excerpt": question.body[:160],
        "feeders": 0,
    }
    assert len(row["excerpt"]) == 160


def test_a_question_planted_by_an_agent_is_not_kept(topic):
    _ask(topic)
    assert not Event.objects.filter(kind="kept").exists()
    plant_question("Is it the pump?", about=[topic.pk], signature="owner", owner=True)
    assert Event.objects.filter(kind="kept").count() == 1


def test_only_asking_about_or_being_fed_makes_a_question_near(topic, make_note):
    fed, other = (
        _ask(topic, "Fed?"),
        plant_question("Other?", about=[make_note("Elsewhere.").pk], signature="owner"),
    )
    clue, doubt = make_note("A clue."), make_note("A doubt.")
    feed(fed.pk, clue.pk, actor="owner")
    feed(other.pk, make_note("Another clue.").pk, actor="owner")
    answer(other.pk, make_note("An answer.").pk, actor="owner")
    reopen(other.pk, actor="owner", by_node_id=doubt.pk)  # open again, by a node not feeding it
    feed(fed.pk, other.pk, actor="owner")  # a question bears on another: the edge leaves `other`
    assert [q["id"] for q in open_questions_near([clue.pk])] == [fed.pk]
    assert open_questions_near([doubt.pk]) == []
    assert open_questions_near([fed.pk]) == []


def test_newest_first_goes_by_when_the_question_was_made_then_by_id(topic, make_note):
    asks = [{"id": topic.pk, "relation": "asks_about"}]
    made_later = _ask(topic, "Asked today?")
    back_dated = make_note("Asked last week?", kind="question", days_old=7, origins=asks)
    with time_machine.travel(datetime(2026, 3, 1, 12, tzinfo=UTC), tick=False):
        first, second = _ask(topic, "One instant?"), _ask(topic, "The same instant?")
    ids = [q["id"] for q in open_questions_near([topic.pk])]
    assert ids == [made_later.pk, back_dated.pk, second.pk, first.pk]
