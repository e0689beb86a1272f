from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from django.db import connection
from django.utils import timezone

from memory.errors import Forbidden, Invalid, NotFound
from memory.models import Edge, Event, EventKind, Node, PendingCite, Ticket, Vector
from memory.scroll import commit_turn
from memory.tokens import create_token
from memory.vectors.embed import embed_missing
from memory.walk import around, open_walk, read_ticket, step
from review.ceremony import root
from tests._helpers.events import mark


@pytest.fixture
def thread(make_note, root_note):
    """Three notes of one file (derived from root_note), the third replying to the first."""
    first = make_note("First thought about herons.")
    second = make_note("Second thought about egrets.")
    third = make_note(
        "Third thought.",
        origins=[
            {"id": root_note.pk, "relation": "derived_from"},
            {"id": first.pk, "relation": "responds_to"},
        ],
    )
    return first, second, third


def routes(token: str, holder: str = "agent") -> set[tuple[str, int]]:
    return {(r["direction"], r["target"]) for r in around(token, holder=holder)["routes"]}


def test_around_discloses_edges_and_thread_neighbours(thread, root_note):
    first, second, third = thread
    token = open_walk(second.pk, holder="agent")
    found = around(token, holder="agent")
    assert next(iter(found["node"])) == "jurisdiction" and "body" not in found["node"]
    assert {(r["direction"], r["target"]) for r in found["routes"]} == {
        ("out", root_note.pk),
        ("prev", first.pk),
        ("next", third.pk),
    }
    assert routes(open_walk(first.pk, holder="agent")) >= {("in", third.pk), ("next", second.pk)}


def test_a_step_spends_the_ticket_and_mints_a_child(thread):
    _first, second, third = thread
    token = open_walk(second.pk, holder="agent")
    routes(token)
    child = step(token, holder="agent", direction="next", target=third.pk)
    assert around(child, holder="agent")["node"]["id"] == third.pk
    ticket = Ticket.objects.get(token_hash=hashlib.sha256(child.encode()).hexdigest())
    assert ticket.parent.spent_at is not None
    with pytest.raises(Forbidden) as refused:
        step(token, holder="agent", direction="next", target=third.pk)
    assert refused.value.code == "ticket_spent"


def test_only_the_tokens_hash_is_stored(thread):
    token = open_walk(thread[0].pk, holder="agent")
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM memory_ticket")
        assert token not in repr(cursor.fetchall())
    assert Ticket.objects.filter(token_hash=hashlib.sha256(token.encode()).hexdigest()).exists()


def test_a_forged_ticket_is_refused(thread):
    open_walk(thread[0].pk, holder="agent")
    with pytest.raises(Forbidden) as refused:
        around("made-up-token", holder="agent")
    assert refused.value.code == "ticket_forged"


def test_another_holders_ticket_is_refused(thread):
    token = open_walk(thread[0].pk, holder="agent")
    with pytest.raises(Forbidden) as refused:
        around(token, holder="someone-else")
    assert refused.value.code == "ticket_holder_mismatch"


def test_an_expired_ticket_is_refused(thread):
    token = open_walk(thread[0].pk, holder="agent")
    assert routes(token)
    later = timezone.now() + timedelta(seconds=settings.GROVE_TICKET_SECONDS + 1)
    with time_machine.travel(later), pytest.raises(Forbidden) as refused:
        around(token, holder="agent")
    assert refused.value.code == "ticket_expired"
    assert refused.value.message == "this ticket has expired; open a new walk"


def test_an_undisclosed_route_is_refused(thread):
    first, second, _third = thread
    token = open_walk(first.pk, holder="agent")
    with pytest.raises(Forbidden) as before_around:
        step(token, holder="agent", direction="next", target=second.pk)
    assert before_around.value.code == "route_undisclosed"
    assert ("next", second.pk) in routes(token)
    with pytest.raises(Forbidden) as wrong_route:
        step(token, holder="agent", direction="in", target=second.pk)
    assert wrong_route.value.code == "route_undisclosed"


def test_a_decayed_neighbour_is_not_a_route(thread):
    first, second, _third = thread
    embed_missing()
    token = open_walk(second.pk, holder="agent")
    assert ("prev", first.pk) in routes(token)
    mark(first, "decayed")
    assert Vector.objects.filter(node=first).exists()
    assert ("prev", first.pk) not in routes(token)
    with pytest.raises(NotFound):
        step(token, holder="agent", direction="prev", target=first.pk)


@pytest.mark.parametrize("kind", ["sealed", "rejected"])
def test_a_sealed_or_rejected_neighbour_is_not_a_route(thread, kind):
    first, _second, third = thread
    token = open_walk(third.pk, holder="agent")
    assert ("out", first.pk) in routes(token)
    mark(first, kind)
    assert not {t for _, t in routes(token)} & {first.pk}
    with pytest.raises(NotFound):
        open_walk(first.pk, holder="agent")


def test_around_as_of_before_a_decay_shows_the_neighbour_and_after_does_not(make_note):
    # Written ten days ago (edges carry their own store clock, so travel rather than backdate).
    with time_machine.travel(timezone.now() - timedelta(days=10)):
        first = make_note("Old heron note.")
        reply = make_note("Reply.", origins=[{"id": first.pk, "relation": "responds_to"}])
    decayed_at = timezone.now() - timedelta(days=5)
    mark(first, "decayed", at=decayed_at)
    before = open_walk(reply.pk, holder="agent", as_of=decayed_at - timedelta(days=1))
    after = open_walk(reply.pk, holder="agent", as_of=decayed_at + timedelta(days=1))
    assert ("out", first.pk) in routes(before)
    assert ("out", first.pk) not in routes(after)


def test_a_node_outside_the_callers_domains_is_invisible_to_the_walk(make_note, root_note):
    work = make_note("Work heron.", domain="work")
    home = make_note("Home reply.", origins=[{"id": work.pk, "relation": "responds_to"}])
    assert ("out", work.pk) in routes(open_walk(home.pk, holder="agent"))
    with pytest.raises(NotFound):
        open_walk(work.pk, holder="agent", domains=["personal"])
    token = open_walk(home.pk, holder="agent", domains=["personal"])
    assert ("out", work.pk) not in routes(token)


def test_reading_through_a_ticket_counts_an_access_and_keeps_the_ticket(thread):
    first = thread[0]
    token = open_walk(first.pk, holder="agent")
    first.refresh_from_db()
    assert first.access_count == 0
    assert read_ticket(token, holder="agent")["body"] == first.body
    first.refresh_from_db()
    assert first.access_count == 1
    assert routes(token)


def test_an_unknown_direction_is_refused_with_the_directions_to_use(thread):
    token = open_walk(thread[0].pk, holder="agent")
    with pytest.raises(Invalid) as refused:
        step(token, holder="agent", direction="sideways", target=thread[1].pk)
    assert refused.value.code == "bad_direction"
    assert refused.value.message.endswith("expected one of: in, out, next, prev, deeper, shallower")


def test_of_two_racing_steps_the_late_one_is_refused_as_spent(thread, monkeypatch):
    import memory.walk as walk_module

    first, second, _ = thread
    token = open_walk(first.pk, holder="agent")
    assert ("next", second.pk) in routes(token)
    check = walk_module.visible_node

    def check_then_race(node_id, **kwargs):
        seen = check(node_id, **kwargs)
        Ticket.objects.update(spent_at=timezone.now())  # the other step commits first
        return seen

    monkeypatch.setattr(walk_module, "visible_node", check_then_race)
    with pytest.raises(Forbidden) as refused:
        step(token, holder="agent", direction="next", target=second.pk)
    assert refused.value.code == "ticket_spent"
    assert refused.value.message == "this ticket was already used for a step"
    assert Ticket.objects.count() == 1  # no child minted


def test_around_returns_the_ticket_and_each_route_by_its_documented_fields(thread, root_note):
    _first, second, third = thread
    token = open_walk(second.pk, holder="agent")
    found = around(token, holder="agent")
    assert found["ticket"] == token and found["node"]["id"] == second.pk
    by_direction = {r["direction"]: r for r in found["routes"]}
    assert set(by_direction["next"]) == {"direction", "edge_kind", "target", "preview"}
    assert by_direction["next"]["edge_kind"] is None and by_direction["next"]["target"] == third.pk
    assert by_direction["out"]["edge_kind"] == "derived_from"


@pytest.mark.parametrize("token", ["", None, 7])
def test_an_empty_or_non_text_ticket_is_refused_as_forged(thread, token):
    with pytest.raises(Forbidden) as refused:
        around(token, holder="agent")
    assert refused.value.code == "ticket_forged"


@pytest.mark.parametrize("holder", ["", "   ", None])
def test_a_walk_without_a_holder_is_refused(thread, holder):
    with pytest.raises(Invalid) as refused:
        open_walk(thread[0].pk, holder=holder)
    assert refused.value.code == "no_holder"


def test_reading_through_a_ticket_reports_trust_as_of_the_walks_instant(make_note):
    node = make_note("Rooted after the walk's instant.")
    then = timezone.now()
    root(node.pk, adopting_words="I hold this.", expected_body_hash=node.body_hash, owner="owner")
    assert read_ticket(open_walk(node.pk, holder="agent"), holder="agent")["trust"] == "ground"
    token = open_walk(node.pk, holder="agent", as_of=then)
    assert read_ticket(token, holder="agent")["trust"] == "unreviewed"


def test_reading_a_wild_node_through_a_ticket_pends_a_cite_for_its_holder(lone):
    node = lone("A wild page read on a walk.")
    read_ticket(open_walk(node.pk, holder="agent:scout"), holder="agent:scout")
    assert PendingCite.objects.filter(holder="agent:scout", node=node).count() == 1


def test_a_step_to_a_target_that_is_not_an_id_names_it(make_note):
    token = open_walk(make_note("Here.").pk, holder="agent")
    with pytest.raises(Invalid) as refused:
        step(token, holder="agent", direction="next", target="north")  # type: ignore[arg-type]
    assert refused.value.message == "target 'north' is not a node id"


def _routes(found: list[dict]) -> set[tuple[str, int]]:
    return {(r["direction"], r["target"]) for r in found}


def _thread_routes(node: Node) -> set[tuple[str, int]]:
    found = around(open_walk(node.pk, holder="agent"), holder="agent")["routes"]
    return {(d, t) for d, t in _routes(found) if d in ("prev", "next")}


def test_pairs_of_one_scroll_are_each_others_prev_and_next(tmp_path, settings, db):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    a, b, c = (commit_turn(conversation="c1", user=w, assistant="ok").node for w in "abc")
    commit_turn(conversation="c2", user="elsewhere", assistant="ok")
    assert _thread_routes(b) == {("prev", a.pk), ("next", c.pk)}


def test_a_notes_thread_is_its_own_first_origins_children(make_note, lone):
    cited, parent = lone("Cited by x, an older id."), lone("Parent of x and y.")
    x = make_note("X.", origins=[{"id": parent.pk}])
    Edge.objects.create(from_node=x, to_node=cited, kind="cites", created_by="sleep")
    y = make_note("Y.", origins=[{"id": parent.pk}])
    make_note("Z, of another thread.")  # derived from root_note, the oldest id
    assert _thread_routes(x) == {("next", y.pk)}


def test_a_thread_neighbours_preview_carries_its_trust(make_note):
    here, there = make_note("Here."), make_note("There, next in the thread.")
    root(there.pk, adopting_words="I hold this.", expected_body_hash=there.body_hash, owner="owner")
    found = around(open_walk(here.pk, holder="agent"), holder="agent")["routes"]
    (route,) = [r for r in found if r["direction"] == "next"]
    assert (route["target"], route["preview"]["trust"]) == (there.pk, "ground")


def test_a_ticket_is_32_random_bytes_and_lives_exactly_its_seconds(make_note, settings):
    token = open_walk(make_note("Here.").pk, holder="agent")
    assert len(token) == 43  # 32 bytes, URL-safe base64 without padding
    ticket = Ticket.objects.get()
    assert ticket.expires_at - ticket.created_at == timedelta(seconds=settings.GROVE_TICKET_SECONDS)


def test_a_walk_opened_at_home_keeps_its_scope_after_a_step(make_note, lone):
    here, there = make_note("Here."), make_note("There, next in the thread.")
    wild = lone("A wild page that cites there.")
    Edge.objects.create(from_node=wild, to_node=there, kind="cites", created_by="sleep")
    token = open_walk(here.pk, holder="agent", scope="home")
    assert ("next", there.pk) in _routes(around(token, holder="agent")["routes"])
    token = step(token, holder="agent", direction="next", target=there.pk)
    assert ("in", wild.pk) not in _routes(around(token, holder="agent")["routes"])
    both = around(open_walk(there.pk, holder="agent"), holder="agent")["routes"]
    assert ("in", wild.pk) in _routes(both)


def test_a_ticket_has_expired_at_its_expiry_instant(make_note):
    token = open_walk(make_note("Here.").pk, holder="agent")
    expires = Ticket.objects.get().expires_at
    with time_machine.travel(expires - timedelta(microseconds=1), tick=False):
        around(token, holder="agent")
    with time_machine.travel(expires, tick=False), pytest.raises(Forbidden) as refused:
        around(token, holder="agent")
    assert refused.value.code == "ticket_expired"


def test_a_walk_without_a_holder_is_told_it_needs_one(make_note):
    with pytest.raises(Invalid) as refused:
        open_walk(make_note("Here.").pk, holder=" ")
    assert (refused.value.code, refused.value.message) == ("no_holder", "a walk needs a holder")


def test_reading_through_a_ticket_names_its_holder_as_the_reader(make_note):
    node = make_note("Read on a walk.")
    read_ticket(open_walk(node.pk, holder="agent:scout"), holder="agent:scout")
    node.refresh_from_db()
    assert (node.access_count, node.last_read_by) == (1, "agent:scout")


def test_reading_through_a_ticket_as_an_agent_records_the_read_against_its_token(make_note):
    node = make_note("Read on a walk by a governed agent.")
    token, _secret = create_token(name="scout", domains=["default"])
    read_ticket(open_walk(node.pk, holder="agent:scout"), holder="agent:scout", agent=token)
    read = Event.objects.get(kind=EventKind.READ)
    assert (read.node_id, read.token_id, read.actor) == (node.pk, token.pk, "agent:scout")


def test_a_step_to_a_target_that_is_not_an_id_is_refused_by_code(make_note):
    token = open_walk(make_note("Here.").pk, holder="agent")
    with pytest.raises(Invalid) as refused:
        step(token, holder="agent", direction="next", target="north")
    assert refused.value.code == "bad_target"


@pytest.mark.parametrize("token", ["", "not-a-ticket"])
def test_a_forged_ticket_is_told_it_is_not_a_walk_ticket(db, token):
    with pytest.raises(Forbidden) as refused:
        around(token, holder="agent")
    assert (refused.value.code, refused.value.message) == (
        "ticket_forged",
        "this is not a walk ticket",
    )


def test_another_holder_and_a_spent_ticket_are_told_why(make_note):
    here, there = make_note("Here."), make_note("There, next in the thread.")
    token = open_walk(here.pk, holder="agent")
    with pytest.raises(Forbidden) as refused:
        around(token, holder="someone-else")
    assert refused.value.message == "this ticket belongs to another holder"
    around(token, holder="agent")
    step(token, holder="agent", direction="next", target=there.pk)
    with pytest.raises(Forbidden) as refused:
        around(token, holder="agent")
    assert refused.value.message == "this ticket was already used for a step"


def test_a_walk_opened_in_one_domain_keeps_its_domains_after_a_step(make_note):
    here, there = make_note("Here."), make_note("There, next in the thread.")
    work = make_note("A work note that cites there.", domain="work")
    Edge.objects.create(from_node=work, to_node=there, kind="cites", created_by="fixture")
    token = open_walk(here.pk, holder="agent", domains=["personal"])
    assert ("next", there.pk) in _routes(around(token, holder="agent")["routes"])
    token = step(token, holder="agent", direction="next", target=there.pk)
    assert Ticket.objects.get(parent__isnull=False).domains == ["personal"]
    assert ("in", work.pk) not in _routes(around(token, holder="agent")["routes"])
    assert ("in", work.pk) in _routes(
        around(open_walk(there.pk, holder="agent"), holder="agent")["routes"]
    )
