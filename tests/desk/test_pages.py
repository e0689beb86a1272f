"""The desk's explaining pages and safe acts, without a browser: supersede diff and banner,
why-is-this-true, questions, let go with Undo."""

from __future__ import annotations

import pytest

from dashboard.graph import neighbourhood
from memory.models import Edge, Event, Node, Trust
from memory.questions import is_open
from memory.trust import trust_of
from review.ceremony import propose
from review.versions import inline, pieces
from tests._helpers.acts import root_as_owner, supersede_as_owner

HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">'


def word_diff(old: str, new: str) -> str:
    return str(inline(pieces(old, new)))


@pytest.fixture
def ground(make_note):
    node = make_note("The spare key is with Ana.")
    propose(node.pk, actor="agent:scout", reason="said twice")
    root_as_owner(node, "Yes, Ana has the spare key.")
    return node


def test_the_supersede_box_starts_from_the_old_words(owner_client, ground):
    html = owner_client.get(f"/review/{ground.pk}/supersede/").content.decode()
    assert '<textarea id="new-body"' in html
    assert (
        html.split('<textarea id="new-body"')[1]
        .split("</textarea>")[0]
        .endswith("The spare key is with Ana.")
    )


def test_the_preview_shows_a_word_diff(owner_client, ground):
    response = owner_client.post(
        f"/review/{ground.pk}/supersede/",
        {"step": "preview", "new_body": "The spare key is with Bo."},
    )
    html = response.content.decode()
    assert "<del>Ana.</del><ins>Bo.</ins>" in html


def test_the_word_diff_escapes_both_sides():
    diff = str(word_diff("safe " + HOSTILE, "safe " + HOSTILE + " more"))
    assert "<script>" not in diff and "&lt;script&gt;" in diff and "<ins> more</ins>" in diff
    assert "<img" not in str(word_diff("a", HOSTILE))


def test_the_old_node_says_what_replaced_it(owner_client, ground):
    new = supersede_as_owner(ground, "The spare key is with Bo.")
    for url in (f"/review/{ground.pk}/", f"/node/{ground.pk}/"):
        html = owner_client.get(url).content.decode()
        assert 'id="replaced-by"' in html and "Replaced by <a href=" in html, url
        assert f">#{new.pk}</a>" in html, url
    assert 'id="replaced-by"' not in owner_client.get(f"/review/{new.pk}/").content.decode()


def test_the_graph_draws_a_replacement_as_supersedes(ground):
    new = supersede_as_owner(ground, "The spare key is with Bo.")
    assert Edge.objects.filter(from_node=new, to_node=ground, kind="derived_from").exists()
    assert (new.pk, ground.pk, "supersedes") in neighbourhood(new.pk).edges
    assert (new.pk, ground.pk, "derived_from") not in neighbourhood(new.pk).edges


def test_why_is_this_true_shows_the_adoption(owner_client, ground, root_note):
    html = owner_client.get(f"/review/{ground.pk}/why/").content.decode()
    assert "Yes, Ana has the spare key." in html and ground.body_hash in html
    assert "matches the stored words" in html and "agent:scout" in html and "said twice" in html
    assert f"#{root_note.pk}" in html and "Seed import" in html


def test_why_is_this_true_refuses_what_is_not_ground(owner_client, make_note):
    node = make_note("Just a note.")
    response = owner_client.get(f"/review/{node.pk}/why/")
    assert response.status_code == 409 and "not ground" in response.content.decode()


def test_a_questions_life(owner_client, make_note):
    topic = make_note("The boiler knocks.")
    clue = make_note("It started after the pressure drop.")
    response = owner_client.post(
        "/review/questions/plant/", {"body": "Why does it knock?", "about": f"#{topic.pk}"}
    )
    question = Node.objects.get(kind="question")
    assert response["Location"] == f"/review/questions/{question.pk}/"
    owner_client.post(f"/review/questions/{question.pk}/feed/", {"node": str(clue.pk)})
    assert Edge.objects.filter(from_node=clue, to_node=question, kind="feeds").exists()
    assert "Why does it knock?" in owner_client.get(f"/review/{topic.pk}/").content.decode()
    owner_client.post(f"/review/questions/{question.pk}/answer/", {"text": "Low pressure."})
    assert not is_open(question.pk)
    answer = Node.objects.get(body="Low pressure.")
    assert trust_of(answer.pk) == Trust.UNREVIEWED  # answering roots nothing
    owner_client.post(f"/review/questions/{question.pk}/reopen/", {"text": "Knocks again."})
    assert is_open(question.pk)
    html = owner_client.get(f"/review/questions/{question.pk}/").content.decode()
    assert "Low pressure." in html and "Knocks again." in html and ">open<" in html


def test_the_questions_page_refuses_bad_input_and_writes_nothing(owner_client, make_note, counts):
    topic = make_note("The boiler knocks.")
    before = counts()
    for about in ("", "twelve", "999999"):
        response = owner_client.post(
            "/review/questions/plant/", {"body": "Why?", "about": about}, follow=True
        )
        assert "Nothing was written" in response.content.decode(), about
    assert counts() == before
    owner_client.post("/review/questions/plant/", {"body": "Why?", "about": str(topic.pk)})
    question = Node.objects.get(kind="question")
    before = counts()
    response = owner_client.post(f"/review/questions/{question.pk}/answer/", {}, follow=True)
    assert "Nothing was written" in response.content.decode() and counts() == before
    assert owner_client.get(f"/review/questions/{topic.pk}/").status_code == 404


@pytest.fixture
def pending(make_note):
    """A note the gate selects now: old, never read, its one neighbour let go."""
    from memory.forgetting import let_go

    old = make_note("An old thought nobody read.", days_old=20)
    let_go(old.out_edges.get().to_node_id, actor="owner")
    return old


def test_let_go_then_undo_on_the_spot(owner_client, pending):
    response = owner_client.post(f"/review/decays/{pending.pk}/let-go/", {"confirmed": "yes"})
    assert response["Location"] == f"/review/decays/?let_go={pending.pk}"
    html = owner_client.get(response["Location"]).content.decode()
    assert 'id="undo-box"' in html and f"/review/decays/{pending.pk}/undo/" in html
    owner_client.post(f"/review/decays/{pending.pk}/undo/")
    pending.refresh_from_db()
    assert pending.decayed_at is None
    assert Event.objects.filter(node=pending, kind="restored").count() == 1
    html = owner_client.get(f"/review/decays/?let_go={pending.pk}").content.decode()
    assert 'id="undo-box"' not in html


def test_a_question_near_a_node_shows_on_its_node_page(owner_client, make_note):
    topic = make_note("The gutter overflows.")
    owner_client.post(
        "/review/questions/plant/", {"body": "Who clears the gutter?", "about": str(topic.pk)}
    )
    assert "Who clears the gutter?" in owner_client.get(f"/node/{topic.pk}/").content.decode()


def test_the_questions_list_splits_open_from_answered(owner_client, make_note):
    topic, fix = make_note("The boiler knocks."), make_note("Pressure topped up.")
    for body in ("Why does it knock?", "When was it serviced?"):
        owner_client.post("/review/questions/plant/", {"body": body, "about": str(topic.pk)})
    knock = Node.objects.get(body="Why does it knock?")
    owner_client.post(f"/review/questions/{knock.pk}/answer/", {"node": str(fix.pk)})
    html = owner_client.get("/review/questions/").content.decode()
    open_part, answered_part = html.split('id="answered-questions"')
    assert "When was it serviced?" in open_part and "Why does it knock?" not in open_part
    assert "Why does it knock?" in answered_part


def test_the_new_pages_show_nothing_of_a_sealed_node(owner_client, ground):
    from review.ceremony import seal

    seal(ground.pk, owner="owner")
    for url in (
        f"/review/{ground.pk}/why/",
        f"/review/{ground.pk}/reject/",
        f"/review/decays/{ground.pk}/let-go/",
    ):
        html = owner_client.get(url).content.decode()
        assert "spare key" not in html and ground.body_hash not in html, url
        assert f"sealed #{ground.pk}" in html, url


def test_undo_of_a_live_node_and_revoke_of_an_unknown_token_write_nothing(
    owner_client, pending, counts
):
    before = counts()
    response = owner_client.post(f"/review/decays/{pending.pk}/undo/", follow=True)
    assert (
        "Nothing was written" in response.content.decode()
        and "is live" in response.content.decode()
    )
    response = owner_client.post("/tokens/", {"name": "nobody"}, follow=True)
    assert "No such active token." in response.content.decode()
    assert counts() == before
