from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memory.errors import Conflict
from memory.models import Edge, Event, Node
from memory.sleep.decay import decay, keep, let_go, pending_decays, restore
from memory.write import write_node


@pytest.fixture
def lone(make_note):
    """A node with no edges at all: internet kinds may name a source instead of an origin."""

    def make(body: str, *, days_old: float = 0, **fields) -> Node:
        fields.setdefault("kind", "internet")
        fields.setdefault("jurisdiction", "wild")
        fields.setdefault("origins", [])
        fields.setdefault("source", "https://example.org/page")
        return make_note(body, days_old=days_old, **fields)

    return make


def authority(node: Node, kind: str) -> None:
    """A ground/proposed event written the way the ceremony would leave it (raw SQL)."""
    detail = {"body_hash": node.body_hash, "adopting_words": "I hold this."}
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO memory_event (at, kind, node_id, actor, reason, snapshot, detail)
               VALUES (%s, %s, %s, 'owner', '', '{}', %s)""",
            [
                connection.ops.adapt_datetimefield_value(timezone.now()),
                kind,
                node.pk,
                json.dumps(detail),
            ],
        )


def is_decayed(node: Node) -> bool:
    node.refresh_from_db()
    return node.decayed_at is not None


def test_it_decays_an_old_unread_unlinked_node_and_snapshots_it(lone):
    node = lone("An old page nobody read.", days_old=40)
    assert node.access_count == 0 and not Edge.objects.filter(from_node=node).exists()
    assert decay()["gate"] == 1
    event = Event.objects.get(node=node, kind="decayed")
    assert event.reason == "age_no_access"
    assert event.snapshot["excerpt"] == "An old page nobody read."
    assert event.snapshot["access_count"] == 0 and "created_at" in event.snapshot


def test_it_spares_a_young_node(lone):
    node = lone("A page from last week.", days_old=7)
    control = lone("Control: an old page.", days_old=40)
    decay()
    assert is_decayed(control) and not is_decayed(node)


def test_it_spares_a_read_node(lone):
    node = lone("An old page read once.", days_old=40)
    Node.objects.filter(pk=node.pk).update(access_count=1)
    decay()
    assert not is_decayed(node)


def test_it_spares_a_node_with_a_live_neighbour(lone, make_note, root_note):
    node = make_note("An old note from the notebook.", days_old=40)
    assert Edge.objects.filter(from_node=node, to_node=root_note).exists()
    assert root_note.decayed_at is None
    decay()
    assert not is_decayed(node)


def test_it_decays_a_node_whose_only_neighbours_are_decayed(make_note, root_note):
    node = make_note("An old note whose notebook is gone.", days_old=40)
    let_go(root_note.pk, actor="owner")
    assert is_decayed(root_note)
    decay()
    assert is_decayed(node)


def test_it_spares_a_permanent_node(lone):
    node = lone("An old permanent page.", days_old=40)
    Node.objects.filter(pk=node.pk).update(permanent=True, permanent_at=timezone.now())
    decay()
    assert not is_decayed(node)


@pytest.mark.parametrize("kind", ["rooted", "proposed"])
def test_it_spares_ground_and_proposed_nodes(lone, kind):
    node = lone(f"An old {kind} page.", days_old=40)
    authority(node, kind)
    decay()
    assert not is_decayed(node)


def test_it_reads_the_store_clock_not_the_referent_time(lone):
    node = lone("Fresh news about 2019.", referent_time="2019-01-01T00:00:00Z")
    assert node.referent_time.year == 2019
    decay()
    assert not is_decayed(node)


def test_the_cascade_takes_a_child_whose_parents_are_all_gone(make_note, root_note):
    child = make_note("An old derived note.", days_old=40)
    make_note("A sibling citing it.", origins=[{"id": child.pk, "relation": "cites"}])
    let_go(root_note.pk, actor="owner")
    result = decay()
    assert result["cascade"] == 1 and is_decayed(child)
    assert Event.objects.get(node=child, kind="decayed").reason == "cascade"


def test_the_cascade_spares_a_child_younger_than_30_days(make_note, root_note):
    child = make_note("A derived note, 20 days old.", days_old=20)
    make_note("A sibling citing it.", origins=[{"id": child.pk, "relation": "cites"}])
    let_go(root_note.pk, actor="owner")
    decay()
    assert not is_decayed(child)


def test_the_cascade_spares_a_child_with_another_live_parent(make_note, lone, root_note):
    other = lone("Another live parent.")
    child = make_note(
        "A note derived from two.",
        days_old=40,
        origins=[
            {"id": root_note.pk, "relation": "derived_from"},
            {"id": other.pk, "relation": "derived_from"},
        ],
    )
    let_go(root_note.pk, actor="owner")
    decay()
    assert not is_decayed(child)


def test_a_dry_run_changes_nothing(lone, counts):
    lone("An old page.", days_old=40)
    before = counts()
    assert decay(dry_run=True)["count"] == 1
    assert counts() == before


def test_keep_counts_as_a_read(lone):
    node = keep(lone("Keep me.", days_old=40).pk, actor="owner")
    assert node.access_count == 1 and node.last_accessed_at is not None
    assert Event.objects.filter(node=node, kind="kept").exists()
    decay()
    assert not is_decayed(node)


@pytest.mark.parametrize("kind", ["rooted", "proposed"])
def test_let_go_refuses_ground_and_proposed(lone, kind):
    node = lone("Protected.")
    authority(node, kind)
    with pytest.raises(Conflict, match="never let go"):
        let_go(node.pk, actor="owner")
    assert not is_decayed(node)


def test_let_go_refuses_a_permanent_node(lone):
    node = lone("Permanent.")
    Node.objects.filter(pk=node.pk).update(permanent=True, permanent_at=timezone.now())
    with pytest.raises(Conflict, match="permanent"):
        let_go(node.pk, actor="owner")


def test_restore_brings_a_node_back_with_its_event(lone):
    node = let_go(lone("Let go, then missed.").pk, actor="owner")
    assert node.decayed_at is not None
    node = restore(node.pk, actor="owner")
    assert node.decayed_at is None
    kinds = list(Event.objects.filter(node=node).order_by("id").values_list("kind", "reason"))
    assert kinds == [("arrived", ""), ("decayed", "owner_let_go"), ("restored", "owner_restore")]


def test_restore_refuses_a_live_node(lone):
    with pytest.raises(Conflict, match="live"):
        restore(lone("Alive.").pk, actor="owner")


def test_rearrival_revives_the_same_node_with_its_trail(lone):
    node = lone("Content that comes back.", days_old=40)
    decay()
    assert is_decayed(node)
    again = write_node(
        body="Content that comes back.",
        kind="internet",
        jurisdiction="wild",
        signature="agent",
        source="https://example.org/page",
    )
    assert again.status == "revived" and again.node.pk == node.pk
    assert again.node.decayed_at is None
    trail = list(Event.objects.filter(node=node).order_by("id").values_list("kind", flat=True))
    assert trail == ["arrived", "decayed", "revived"]


def test_pending_decays_lists_now_and_soon_with_why(lone):
    now_node = lone("Eligible now.", days_old=20)
    soon = lone("Eligible in four days.", days_old=10)
    lone("Far off.", days_old=1)
    assert [p["id"] for p in pending_decays()] == [now_node.pk]
    items = pending_decays(within_days=5)
    assert [p["id"] for p in items] == [now_node.pk, soon.pk]
    assert items[1]["days_until_eligible"] == pytest.approx(4, abs=0.1)
    assert items[1]["never_read"] and items[1]["no_live_neighbour"]
    assert not items[1]["eligible_now"] and items[0]["eligible_now"]


def test_pending_decays_with_a_limit_gives_the_most_eligible(lone):
    oldest = lone("Oldest page.", days_old=60)
    older = lone("Older page.", days_old=40)
    lone("Old page.", days_old=20)
    assert len(pending_decays()) == 3
    assert [p["id"] for p in pending_decays(limit=2)] == [oldest.pk, older.pk]


def test_pending_decays_with_a_limit_skips_protected_nodes(lone):
    ground = lone("Ground, never decays.", days_old=60)
    authority(ground, "rooted")
    other = lone("Plain old page.", days_old=30)
    assert [p["id"] for p in pending_decays(limit=1)] == [other.pk]


def test_pending_decays_filters_by_domain(lone):
    lone("Work page.", days_old=20, domain="work")
    assert pending_decays(domains=["personal"]) == []
    assert len(pending_decays(domains=["work"])) == 1


def test_the_gate_is_rechecked_under_the_lock(lone):
    node = lone("Read between selection and flag.", days_old=40)
    from memory.sleep import decay as decay_module

    cutoff = timezone.now() - timedelta(days=14)
    Node.objects.filter(pk=node.pk).update(access_count=1)
    done = decay_module._decay_ids(
        [node.pk],
        where=decay_module._GATE,
        cutoff=cutoff,
        since=timezone.now(),
        reason="age_no_access",
        actor="sleep",
    )
    assert done == [] and not is_decayed(node)
