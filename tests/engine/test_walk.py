from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from django.db import connection
from django.utils import timezone

from memory.errors import Forbidden, Invalid, NotFound
from memory.models import Node, Ticket, Vector
from memory.vectors.embed import embed_missing
from memory.walk import around, open_walk, read_ticket, step


def mark(node: Node, kind: str, *, at=None) -> None:
    """A raw-SQL fixture for an audit event (ceremonies and decay write these in real life)."""
    at = at or timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail) "
            "VALUES (%s, %s, %s, 'fixture', '', '{}', '{}')",
            [at, kind, node.pk],
        )
        if kind == "decayed":
            cursor.execute("UPDATE memory_node SET decayed_at = %s WHERE id = %s", [at, node.pk])


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
    assert list(found["node"])[0] == "jurisdiction" and "body" not in found["node"]
    assert {(r["direction"], r["target"]) for r in found["routes"]} == {
        ("out", root_note.pk),
        ("prev", first.pk),
        ("next", third.pk),
    }
    assert routes(open_walk(first.pk, holder="agent")) >= {("in", third.pk), ("next", second.pk)}


def test_a_step_spends_the_ticket_and_mints_a_child(thread):
    first, second, third = thread
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
    first, second, third = thread
    token = open_walk(first.pk, holder="agent")
    with pytest.raises(Forbidden) as before_around:
        step(token, holder="agent", direction="next", target=second.pk)
    assert before_around.value.code == "route_undisclosed"
    assert ("next", second.pk) in routes(token)
    with pytest.raises(Forbidden) as wrong_route:
        step(token, holder="agent", direction="in", target=second.pk)
    assert wrong_route.value.code == "route_undisclosed"


def test_a_decayed_neighbour_is_not_a_route(thread):
    first, second, third = thread
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
    first, second, third = thread
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
    first, second, third = thread
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
