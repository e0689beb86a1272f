from __future__ import annotations

import pytest
from django.test import Client

from dashboard.owner import ensure_owner
from memory.models import Event, Trust
from memory.trust import trust_of
from review.ceremony import preview_supersede, propose, root, seal

HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)"> \u202egnp.exe ' + "x" * 5000


@pytest.fixture
def proposed(make_note):
    node = make_note("The boiler is serviced every March.")
    propose(node.pk, actor="agent:scout", reason="seen in three notes")
    return node


@pytest.fixture
def ground(make_note):
    node = make_note("The spare key is with Ana.")
    root(node.pk, adopting_words="Yes.", expected_body_hash=node.body_hash, owner="owner")
    return node


def _htmx(client, url, data=None):
    return client.post(url, data or {}, headers={"HX-Request": "true"})


def test_it_lists_proposed_nodes_oldest_first_with_proposer_and_reason(owner_client, make_note):
    first, second, idle = make_note("First."), make_note("Second."), make_note("Idle.")
    propose(first.pk, actor="agent:a", reason="why one")
    propose(second.pk, actor="agent:b", reason="why two")
    response = owner_client.get("/review/")
    assert [item.node.pk for item in response.context["items"]] == [first.pk, second.pk]
    html = response.content.decode()
    assert "agent:a" in html and "why two" in html and f'id="node-{idle.pk}"' not in html


def test_the_root_screen_shows_the_stored_body_and_its_hash(owner_client, proposed):
    html = owner_client.get(f"/review/{proposed.pk}/root/").content.decode()
    assert "The boiler is serviced every March." in html
    assert f'name="expected_body_hash" value="{proposed.body_hash}"' in html
    assert '<label for="adopting-words">' in html


def test_root_with_the_matching_hash_writes_a_rooted_event(owner_client, proposed):
    response = owner_client.post(
        f"/review/{proposed.pk}/root/",
        {"adopting_words": "I adopt it.", "expected_body_hash": proposed.body_hash},
    )
    assert response.status_code == 302
    event = Event.objects.get(node=proposed, kind="rooted")
    assert (event.actor, event.detail["adopting_words"]) == ("owner", "I adopt it.")
    assert trust_of(proposed.pk) == Trust.GROUND


def test_root_with_a_tampered_hash_is_refused_and_writes_nothing(owner_client, proposed, counts):
    before = counts()
    response = owner_client.post(
        f"/review/{proposed.pk}/root/",
        {"adopting_words": "I adopt it.", "expected_body_hash": "0" * 64},
    )
    assert response.status_code == 409
    assert "nothing was written" in response.content.decode()
    assert "not the text stored" in response.content.decode()
    assert counts() == before
    assert trust_of(proposed.pk) == Trust.PROPOSED


def test_root_without_adopting_words_is_refused(owner_client, proposed, counts):
    before = counts()
    response = owner_client.post(
        f"/review/{proposed.pk}/root/", {"expected_body_hash": proposed.body_hash}
    )
    assert response.status_code == 400
    assert "adopting words are required" in response.content.decode()
    assert counts() == before


def test_reject_needs_a_reason_and_then_tombstones(owner_client, proposed, counts):
    before = counts()
    refused = owner_client.post(
        f"/review/{proposed.pk}/reject/", {"reason": "  ", "confirmed": "yes"}
    )
    assert refused.status_code == 400 and "a reason is required" in refused.content.decode()
    assert counts() == before
    response = owner_client.post(
        f"/review/{proposed.pk}/reject/",
        {"reason": "wrong boiler", "confirmed": "yes", "next": "/review/"},
    )
    assert response.status_code == 302 and response["Location"] == "/review/"
    assert trust_of(proposed.pk) == Trust.REJECTED
    assert Event.objects.get(node=proposed, kind="rejected").reason == "wrong boiler"


def test_seal_and_unseal_from_the_queue(owner_client, proposed):
    owner_client.post(f"/review/{proposed.pk}/seal/")
    assert trust_of(proposed.pk) == Trust.SEALED
    html = owner_client.get("/review/").content.decode()
    assert f"sealed #{proposed.pk}" in html
    assert "boiler" not in html and proposed.body_hash not in html
    owner_client.post(f"/review/{proposed.pk}/unseal/")
    assert trust_of(proposed.pk) == Trust.PROPOSED


def test_a_sealed_node_shows_nothing_but_its_id_on_every_review_page(owner_client, ground):
    seal(ground.pk, owner="owner")
    for url in (
        "/review/",
        f"/review/{ground.pk}/",
        f"/review/{ground.pk}/root/",
        f"/review/{ground.pk}/supersede/",
    ):
        html = owner_client.get(url).content.decode()
        assert f"sealed #{ground.pk}" in html, url
        assert "spare key" not in html and ground.body_hash not in html, url


def test_htmx_row_actions_answer_with_the_row_alone(owner_client, proposed):
    response = _htmx(owner_client, f"/review/{proposed.pk}/seal/")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith(f'<tr id="node-{proposed.pk}"')
    assert "<html" not in html and f"sealed #{proposed.pk}" in html and "boiler" not in html
    html = _htmx(owner_client, f"/review/{proposed.pk}/unseal/").content.decode()
    assert "boiler" in html and "<html" not in html


def test_an_htmx_refusal_comes_back_inside_the_row(owner_client, proposed, counts):
    owner_client.post(f"/review/{proposed.pk}/decline/")
    before = counts()
    html = _htmx(owner_client, f"/review/{proposed.pk}/decline/").content.decode()
    assert html.lstrip().startswith(f'<tr id="node-{proposed.pk}"')
    assert "Nothing was written" in html and "not proposed" in html
    assert counts() == before


def test_a_plain_post_goes_back_to_a_local_next_only(owner_client, proposed):
    panel = f"/review/{proposed.pk}/"
    assert owner_client.post(f"/review/{proposed.pk}/seal/", {"next": panel})["Location"] == panel
    response = owner_client.post(
        f"/review/{proposed.pk}/unseal/", {"next": "https://evil.example/"}
    )
    assert response["Location"] == "/review/"


def test_supersede_previews_the_scrubbed_text_and_its_hash(owner_client, ground):
    text = "<think>hm</think>The spare key is with Bo now."
    response = owner_client.post(
        f"/review/{ground.pk}/supersede/", {"step": "preview", "new_body": text}
    )
    expected = preview_supersede(text)
    assert expected["body"] == "The spare key is with Bo now."
    assert response.context["preview"] == expected
    assert f'value="{expected["body_hash"]}"' in response.content.decode()


def test_supersede_confirm_makes_new_ground_and_shows_both(owner_client, ground):
    preview = preview_supersede("The spare key is with Bo now.")
    response = owner_client.post(
        f"/review/{ground.pk}/supersede/",
        {
            "step": "confirm",
            "new_body": preview["body"],
            "adopting_words": "Bo has it.",
            "expected_body_hash": preview["body_hash"],
        },
    )
    assert response["Location"] == f"/review/{ground.pk}/superseded/"
    assert trust_of(ground.pk) == Trust.SUPERSEDED
    html = owner_client.get(response["Location"]).content.decode()
    assert "The spare key is with Ana." in html and "The spare key is with Bo now." in html


def test_supersede_with_a_stale_hash_is_refused_and_writes_nothing(owner_client, ground, counts):
    before = counts()
    response = owner_client.post(
        f"/review/{ground.pk}/supersede/",
        {
            "step": "confirm",
            "new_body": "The key is with Bo.",
            "adopting_words": "Yes.",
            "expected_body_hash": preview_supersede("Something else.")["body_hash"],
        },
    )
    assert response.status_code == 409
    assert "nothing was written" in response.content.decode()
    assert counts() == before and trust_of(ground.pk) == Trust.GROUND


def test_supersede_refuses_a_node_that_is_not_ground(owner_client, proposed):
    html = owner_client.get(f"/review/{proposed.pk}/supersede/").content.decode()
    assert "Only a ground node can be superseded" in html


def test_hostile_bodies_render_as_text(owner_client, make_note):
    node = make_note(HOSTILE)
    propose(node.pk, actor="agent:<b>x</b>", reason='"><script>alert(3)</script>')
    for url in ("/review/", f"/review/{node.pk}/", f"/review/{node.pk}/root/"):
        html = owner_client.get(url).content.decode()
        assert "<script>alert" not in html and "<img src=x" not in html, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, url


REVIEW_PAGES = [
    "/review/",
    "/review/{id}/",
    "/review/{id}/root/",
    "/review/{id}/supersede/",
    "/review/{id}/superseded/",
    "/review/decays/",
]
REVIEW_POSTS = [
    "/review/{id}/root/",
    "/review/{id}/reject/",
    "/review/{id}/seal/",
    "/review/{id}/unseal/",
    "/review/{id}/supersede/",
]


@pytest.mark.parametrize("url", REVIEW_PAGES)
def test_every_page_redirects_to_login_when_signed_out(client, proposed, url):
    response = client.get(url.format(id=proposed.pk))
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize("url", REVIEW_POSTS)
def test_every_post_without_a_csrf_token_is_refused(proposed, counts, url):
    client = Client(enforce_csrf_checks=True)
    client.force_login(ensure_owner())
    before = counts()
    response = client.post(url.format(id=proposed.pk), {"reason": "r"})
    assert response.status_code == 403
    assert counts() == before


@pytest.fixture
def lonely(make_note):
    """A note the sweep collects now: 20 days old, never read, its only neighbour decayed."""
    from memory.forgetting import let_go

    node = make_note("An old thought nobody read.", days_old=20)
    let_go(node.out_edges.get().to_node_id, actor="owner")  # its origin, the root note
    return node


@pytest.fixture
def almost(make_note, lonely):
    """A page the sweep will collect in about 4 days (no origin: the root note has decayed, and
    a new note may not derive from a decayed one)."""
    return make_note(
        "A newer thought nobody read.",
        days_old=10,
        origins=[],
        kind="import",
        jurisdiction="wild",
        source="newer.md",
    )


def test_pending_decays_shows_now_and_soon_with_why(owner_client, lonely, almost):
    response = owner_client.get("/review/decays/")
    assert [r["id"] for r in response.context["now_rows"]] == [lonely.pk]
    assert [r["id"] for r in response.context["soon_rows"]] == [almost.pk]
    html = response.content.decode()
    assert "no agent read it; nothing you keep depends on it; " in html
    assert "collected in 4.0 days" in html


def test_the_within_control_narrows_soon(owner_client, lonely, almost):
    response = owner_client.get("/review/decays/?within=2")
    assert response.context["soon_rows"] == [] and response.context["within"] == 2
    response = owner_client.get("/review/decays/?within=banana")
    assert response.context["within"] == 7 and "whole number" in response.content.decode()


def test_keep_is_not_a_read_and_leaves_the_list(owner_client, lonely):
    assert [r["id"] for r in owner_client.get("/review/decays/").context["now_rows"]] == [lonely.pk]
    response = owner_client.post(
        f"/review/decays/{lonely.pk}/keep/", {"next": "/review/decays/?within=3"}
    )
    assert response["Location"] == "/review/decays/?within=3"
    lonely.refresh_from_db()
    assert lonely.access_count == 0 and Event.objects.filter(node=lonely, kind="kept").exists()
    assert owner_client.get("/review/decays/").context["now_rows"] == []


def test_let_go_decays_it_now(owner_client, almost):
    asked = owner_client.post(f"/review/decays/{almost.pk}/let-go/")
    assert "What letting go does" in asked.content.decode()
    almost.refresh_from_db()
    assert almost.decayed_at is None
    owner_client.post(f"/review/decays/{almost.pk}/let-go/", {"confirmed": "yes"})
    almost.refresh_from_db()
    assert almost.decayed_at is not None
    assert Event.objects.get(node=almost, kind="decayed").reason == "owner_let_go"


def test_htmx_keep_and_let_go_answer_with_the_row_in_its_new_state(owner_client, lonely, almost):
    html = _htmx(owner_client, f"/review/decays/{lonely.pk}/keep/").content.decode()
    assert html.lstrip().startswith(f'<tr id="node-{lonely.pk}"') and "<html" not in html
    assert "Kept." in html and "Let go now" not in html


def test_letting_go_ground_is_refused_and_writes_nothing(owner_client, ground, counts):
    before = counts()
    response = owner_client.post(
        f"/review/decays/{ground.pk}/let-go/", {"confirmed": "yes"}, follow=True
    )
    html = response.content.decode()
    assert "Nothing was written" in html and "never let go" in html
    assert counts() == before


@pytest.mark.parametrize("url", ["/review/decays/{id}/keep/", "/review/decays/{id}/let-go/"])
def test_decay_posts_without_a_csrf_token_are_refused(lonely, counts, url):
    client = Client(enforce_csrf_checks=True)
    client.force_login(ensure_owner())
    before = counts()
    assert client.post(url.format(id=lonely.pk)).status_code == 403
    assert counts() == before


def test_the_root_screen_warns_of_direction_marks(owner_client, make_note):
    plain = make_note("Nothing hidden here.")
    assert "U+202E" not in owner_client.get(f"/review/{plain.pk}/root/").content.decode()
    node = make_note("Pay \u202e0001\u202c today.")
    assert "U+202C, U+202E" in owner_client.get(f"/review/{node.pk}/root/").content.decode()


def test_the_queue_shows_the_oldest_page_and_says_how_many_wait(
    owner_client, make_note, monkeypatch
):
    first, second = make_note("First."), make_note("Second.")
    propose(first.pk, actor="agent:a")
    propose(second.pk, actor="agent:b")
    monkeypatch.setattr("review.views.QUEUE_PAGE", 1)
    response = owner_client.get("/review/")
    assert [item.node.pk for item in response.context["items"]] == [first.pk]
    assert "Showing 1–1 of 2, oldest first" in response.content.decode()


def test_pending_decays_lists_are_two_independent_marks(owner_client, make_note, lonely, almost):
    from datetime import timedelta

    from django.utils import timezone

    from memory.reach import mark

    make_note("Holds its origin for another day.", days_old=13, origins=[{"id": lonely.pk}])
    clipping = make_note(
        "An old clipping.",
        kind="internet",
        jurisdiction="wild",
        origins=[],
        source="x.org",
        days_old=30,
    )
    response = owner_client.get("/review/decays/?within=5")
    now = timezone.now()
    at_now = set(mark(now - timedelta(days=14)).garbage.tolist())
    later = set(mark(now - timedelta(days=9)).garbage.tolist())
    assert at_now == {clipping.pk} and len(later) == 4  # the held origin is in "soon"
    assert {r["id"] for r in response.context["now_rows"]} == at_now
    assert {r["id"] for r in response.context["soon_rows"]} == later - at_now


def test_pending_decays_shows_the_most_eligible_page_and_says_so(
    owner_client, make_note, monkeypatch
):
    from review import decay_views

    for days in (40, 30, 20):
        make_note(
            f"Clipping {days}.",
            kind="internet",
            jurisdiction="wild",
            origins=[],
            source="https://example.org",
            days_old=days,
        )
    monkeypatch.setattr(decay_views, "PAGE_ROWS", 2)
    response = owner_client.get("/review/decays/")
    assert response.status_code == 200
    assert [row["excerpt"] for row in response.context["now_rows"]] == [
        "Clipping 40.",
        "Clipping 30.",
    ]
    assert b"Showing the 2 most eligible" in response.content


def test_a_sealed_ground_node_asks_the_second_confirmation_before_reject(owner_client, ground):
    seal(ground.pk, owner="owner")
    response = owner_client.post(
        f"/review/{ground.pk}/reject/", {"reason": "x", "confirmed": "yes"}
    )
    assert response.status_code == 200
    assert not Event.objects.filter(node=ground, kind="rejected").exists()
    owner_client.post(
        f"/review/{ground.pk}/reject/",
        {"reason": "x", "confirmed": "yes", "ground_confirmed": "yes"},
    )
    assert Event.objects.filter(node=ground, kind="rejected").exists()
