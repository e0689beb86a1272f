"""Engine behaviours (recall, walk, visibility, sleep's decay, reach and promote) that round 4's
whole-module, one-child mutation run found no test pinned (issue 16, docs/mutation.md "Round 4,
engine modules"). Each test is named for the behaviour it holds; unit level, no browser and no
worker."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from datetime import timezone as tz

import numpy as np
import pytest
import time_machine
from django.utils import timezone

import memory.vectors.matrix as matrix_module
from memory import reach
from memory.errors import Conflict, Forbidden, Invalid, NotFound
from memory.forgetting import _created_at, keep, let_go, pending_decays, restore
from memory.models import Edge, Node, PendingCite, Ticket, Vector
from memory.reach import _held_decayed
from memory.scroll import commit_turn
from memory.sleep.decay import decay
from memory.vectors.embed import embed_missing, get_embedder
from memory.vectors.matrix import _coarse_rows, exact_candidates, vector_matrix
from memory.visibility import Visibility, _aware, lawful
from memory.walk import around, open_walk, read_ticket, step
from review.ceremony import root, seal
from tests._helpers.events import authority
from tests._helpers.nodes import chain, is_decayed
from tests._helpers.vectors import START, matrix_of


def test_a_stored_instant_keeps_its_moment_whether_text_naive_or_in_another_zone() -> None:
    moment = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    assert _aware("2026-03-04 05:06:07") == moment
    assert _aware(datetime(2026, 3, 4, 5, 6, 7)) == moment
    east = moment.astimezone(tz(timedelta(hours=2)))
    assert _aware(east) == moment


def test_days_until_eligible_count_days_of_86400_seconds(lone, settings):
    # Long spans, so that a day a second too long shows in the first decimal.
    settings.GROVE_DECAY_MIN_AGE_DAYS = 10_000
    node = lone("Nine thousand days old.", days_old=9_000)
    (item,) = pending_decays(within_days=2_000)
    assert (item["id"], item["eligible_now"]) == (node.pk, False)
    assert (item["age_days"], item["days_until_eligible"]) == (9000.0, 1000.0)


def test_a_young_holding_cycle_is_eligible_when_its_members_own_ages_say(lone):
    a, b = lone("Cites b.", days_old=13.5), lone("Cites a.", days_old=13.6)
    Edge.objects.create(from_node=a, to_node=b, kind="cites", created_by="sleep")
    Edge.objects.create(from_node=b, to_node=a, kind="cites", created_by="sleep")
    items = pending_decays(within_days=5)
    # Each holds the other, so both go when the younger does, in half a day.
    assert {(i["id"], i["days_until_eligible"]) for i in items} == {(a.pk, 0.5), (b.pk, 0.5)}


def test_creation_times_are_read_past_the_first_chunk_of_900_ids(lone):
    node = lone("The 901st id asked for.")
    padding = [10**9 + i for i in range(900)]  # ids no test node reaches
    assert _created_at([*padding, node.pk]) == {node.pk: node.created_at}


def test_restoring_a_node_brings_back_each_of_its_decayed_origins(make_note, lone):
    first, second = lone("First origin.", days_old=40), lone("Second origin.", days_old=40)
    both = make_note("On both.", days_old=40, origins=[{"id": first.pk}, {"id": second.pk}])
    decay()
    assert all(is_decayed(n) for n in (first, second, both))
    restore(both.pk, actor="owner")
    assert not any(is_decayed(n) for n in (first, second, both))


def test_a_let_go_origin_stays_decayed_whatever_happened_to_it_after(make_note, lone):
    p, k, g = chain(make_note, lone)
    let_go(p.pk, actor="owner")
    seal(p.pk, owner="owner")  # a later event on p, not a decay
    decay()
    restore(g.pk, actor="owner")
    assert not is_decayed(g) and not is_decayed(k) and is_decayed(p)


def test_the_restore_walk_stops_once_it_has_seen_5000_nodes(lone):
    # The holder and 4,999 decayed nodes it cites make 5,000 seen after one level: the walk
    # stops there, and the node one level further stays out of the chain.
    holder, gone = lone("Holds many."), timezone.now()
    rows = [
        Node(
            body=f"Cited {i}.",
            body_hash=f"{i:064x}",
            content_key=f"{i:064x}",
            kind="internet",
            jurisdiction="wild",
            signature="bench",
            decayed_at=gone,
        )
        for i in range(5_000)
    ]
    cited = Node.objects.bulk_create(rows)
    further, first = cited.pop(), cited[0]
    edges = [Edge(from_node=holder, to_node=n, kind="cites", created_by="bench") for n in cited]
    edges.append(Edge(from_node=first, to_node=further, kind="cites", created_by="bench"))
    Edge.objects.bulk_create(edges)
    assert _held_decayed(first.pk) == [further.pk]  # one level further, when it is reached
    assert _held_decayed(holder.pk) == sorted(n.pk for n in cited)


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


def test_lawful_labels_each_node_with_its_trust_as_of_the_instant(make_note):
    node = make_note("Rooted after the instant.")
    then = timezone.now()
    root(node.pk, adopting_words="I hold this.", expected_body_hash=node.body_hash, owner="owner")
    now_view = Visibility.of(domains=None, scope="both", as_of=None)
    assert lawful([node.pk], now_view) == {node.pk: "ground"}
    then_view = Visibility.of(domains=None, scope="both", as_of=then)
    assert lawful([node.pk], then_view) == {node.pk: "unreviewed"}


def test_pending_soon_come_by_days_until_eligible_not_by_id(lone):
    later, sooner = lone("Three days to go.", days_old=11), lone("Two days to go.", days_old=12)
    assert [i["id"] for i in pending_decays(within_days=5)] == [sooner.pk, later.pk]


def test_pending_soon_keep_to_the_domains_asked_for(lone):
    work = lone("Work, soon.", days_old=12, domain="work")
    lone("Personal, soon.", days_old=12)
    assert [i["id"] for i in pending_decays(within_days=5, domains=["work"])] == [work.pk]


def test_pending_decays_by_default_lists_only_what_is_eligible_now(lone):
    old = lone("Eligible now.", days_old=20)
    lone("Eligible in half a day.", days_old=13.5)
    assert [i["id"] for i in pending_decays()] == [old.pk]


def test_a_pending_item_gives_each_documented_field_by_name(lone):
    node = lone("Old, in the work domain.", days_old=20, domain="work")
    (item,) = pending_decays()
    assert {k: v for k, v in item.items() if k != "why"} == {
        "id": node.pk,
        "kind": "internet",
        "domain": "work",
        "excerpt": "Old, in the work domain.",
        "created_at": node.created_at.isoformat(),
        "age_days": 20.0,
        "eligible_now": True,
        "days_until_eligible": 0.0,
    }
    assert item["why"][:2] == ["not read", "20 days old"]


def test_a_node_as_old_as_the_threshold_is_not_called_young(lone):
    lone("Fourteen days old, to the tenth.", days_old=14.02)
    (item,) = pending_decays()
    assert item["age_days"] == 14.0
    assert not [w for w in item["why"] if w.startswith("young")]


def test_let_go_says_why_it_refuses(lone):
    gone = let_go(lone("Let go already.", days_old=40).pk, actor="owner")
    permanent = lone("Read into permanence.")
    Node.objects.filter(pk=permanent.pk).update(permanent=True, permanent_at=timezone.now())
    ground = lone("Held as ground.")
    authority(ground, "rooted")
    expected = {
        gone.pk: f"node {gone.pk} has already decayed",
        permanent.pk: f"node {permanent.pk} is permanent: reads made it so, and that never reverts",
        ground.pk: f"node {ground.pk} is ground; a ground node is never let go",
    }
    for node_id, message in expected.items():
        with pytest.raises(Conflict) as refused:
            let_go(node_id, actor="owner")
        assert refused.value.message == message


def test_the_owners_acts_on_a_missing_node_say_it_does_not_exist(db):
    for act in (keep, let_go, restore):
        with pytest.raises(NotFound) as refused:
            act(10**9, actor="owner")
        assert refused.value.message == f"node {10**9} does not exist"


def test_decay_takes_the_age_it_is_given_over_the_setting(lone):
    node = lone("Twenty days old.", days_old=20)
    assert decay(min_age_days=30)["count"] == 0
    assert not is_decayed(node)
    assert decay()["count"] == 1


def test_decay_spares_a_node_sealed_between_its_mark_and_its_sweep(lone, monkeypatch):
    node = lone("Sealed while the sleep runs.", days_old=40)
    order = reach.holders_first

    def seal_then_order(garbage, edges):
        seal(node.pk, owner="owner")  # after the mark, before the sweep
        return order(garbage, edges)

    monkeypatch.setattr(reach, "holders_first", seal_then_order)
    assert decay() == {"count": 0, "candidates": 1, "unreachable": 1}
    assert not is_decayed(node)


def test_decay_with_a_limit_of_zero_or_less_sweeps_nothing(lone):
    node = lone("Unreachable, old.", days_old=40)
    for limit in (0, -1):
        assert decay(limit=limit) == {"count": 0, "candidates": 1, "unreachable": 1}
    assert not is_decayed(node)


def _damaged(node: Node) -> Vector:
    """A vector row for `node` whose blob is 4 bytes short of its dim."""
    embedder = get_embedder()
    data = b"\0" * (embedder.dim * 4 - 4)
    return Vector.objects.create(node=node, model=embedder.name, dim=embedder.dim, data=data)


def test_the_vector_matrix_names_only_the_damaged_row_it_skips(make_note, caplog, monkeypatch):
    monkeypatch.setattr(matrix_module, "_matrices", {})  # built afresh from this test's rows
    note = make_note("The heron stands in the reeds.")
    broken = make_note("A broken vector belongs to this heron note.")
    vector = _damaged(broken)  # the first vector row: its id is not its node's
    embed_missing()
    dim = get_embedder().dim
    with caplog.at_level(logging.WARNING, logger="grove.recall"):
        matrix = vector_matrix()
    rows = matrix.ids[: matrix.n].tolist()
    assert note.pk in rows and broken.pk not in rows and vector.pk != broken.pk
    assert [r.getMessage() for r in caplog.records if r.name == "grove.recall"] == [
        f"vector {vector.pk} (node {broken.pk}) has {dim * 4 - 4} bytes for dim {dim}: skipped"
    ]


def test_new_rows_that_are_all_damaged_leave_the_cached_matrix_as_it_was(make_note, monkeypatch):
    monkeypatch.setattr(matrix_module, "_matrices", {})
    make_note("The heron stands in the reeds.")
    _damaged(make_note("Damaged from the start."))  # vector 1: the last good row's ids differ
    embed_missing()
    matrix = vector_matrix()
    rows = matrix.ids[: matrix.n].tolist()
    make_note("No vector yet: the damaged row's id is not its node's.")
    _damaged(make_note("A broken vector, the only new row."))
    assert vector_matrix() is matrix and matrix.ids[: matrix.n].tolist() == rows
    assert vector_matrix() is matrix and matrix.ids[: matrix.n].tolist() == rows


def test_decay_reports_progress_once_per_batch(lone):
    lone("Unreachable one.", days_old=40), lone("Unreachable two.", days_old=40)
    beats: list[dict] = []
    decay(beat=lambda **fields: beats.append(fields))
    assert beats == [{"count": 2, "candidates": 2, "unreachable": 2}]


def test_decay_spares_a_node_held_anew_after_its_mark(make_note, lone, monkeypatch):
    node = lone("Cited while the sleep runs.", days_old=40)
    order = reach.holders_first

    def cite_then_order(garbage, edges):
        make_note("A young note citing it.", origins=[{"id": node.pk, "relation": "cites"}])
        return order(garbage, edges)

    monkeypatch.setattr(reach, "holders_first", cite_then_order)
    assert decay()["count"] == 0
    assert not is_decayed(node)


def test_the_float16_pass_runs_exactly_within_coarse_rows(monkeypatch):
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    rng = np.random.default_rng(0)
    for n, coarse in ((49, False), (50, True), (60, True), (61, False)):
        matrix = matrix_of(rng.standard_normal((n, 8)).astype(np.float32))
        q = rng.standard_normal(8).astype(np.float32)
        # k * COARSE_FETCH covers every row: the float16 pass, when it runs, returns them all.
        assert (_coarse_rows(matrix, n, q, None, 20) is not None) == coarse


def test_the_float16_pass_with_one_or_no_visible_row(monkeypatch):
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    rng = np.random.default_rng(1)
    matrix = matrix_of(rng.standard_normal((55, 8)).astype(np.float32))
    q = rng.standard_normal(8).astype(np.float32)
    first = Visibility.of(domains=None, scope="both", as_of=START)  # only row 0 existed then
    assert [i for i, _ in exact_candidates(matrix, q, first, 5)] == [1]
    nowhere = Visibility.of(domains=["nowhere"], scope="both", as_of=None)
    assert exact_candidates(matrix, q, nowhere, 5) == []
