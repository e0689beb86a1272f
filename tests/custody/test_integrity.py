"""Each integrity check, made to fail on purpose, then the clean case."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.utils import timezone

from memory import audit
from memory.custody.integrity import run_checks
from memory.models import Event, EventKind, Node
from tests._helpers.vendor import drop_trigger, on_postgres, raw


def failing(name: str) -> list[str]:
    (result,) = run_checks([name])
    return result.violations


def test_a_clean_database_reports_zero_violations(make_note, capsys):
    make_note("All is well.")
    assert all(result.ok for result in run_checks())
    call_command("integrity")
    assert "FAIL" not in capsys.readouterr().out


def test_it_reports_a_permanent_but_decayed_node(make_note):
    node = make_note("Both at once.")
    drop_trigger("memory_node_permanent_never_decays")  # rolled back with the test
    raw(
        "UPDATE memory_node SET permanent = TRUE, permanent_at = '2026-01-01',"
        " decayed_at = '2026-02-01' WHERE id = %s",
        (node.pk,),
    )
    assert failing("permanent_but_decayed") == [f"node {node.pk} is permanent but decayed"]


def test_it_reports_a_decayed_node_without_its_event(make_note):
    node = make_note("Gone without a word.")
    raw("UPDATE memory_node SET decayed_at = '2026-02-01' WHERE id = %s", (node.pk,))
    assert failing("decayed_without_event") == [
        f"node {node.pk} is decayed but has no decayed event"
    ]


def test_it_reports_a_flag_that_disagrees_with_the_latest_event(make_note):
    node = make_note("Said decayed, still live.")
    with transaction.atomic():
        audit.record("decayed", node=node, actor="sleep", reason="age_no_access")
    assert failing("lifecycle_flag_disagrees_with_latest_event") == [
        f"node {node.pk} is live but its latest lifecycle event is decayed"
    ]


def test_it_reports_a_permanent_node_without_its_event(make_note):
    node = make_note("Permanent by fiat.")
    raw(
        "UPDATE memory_node SET permanent = TRUE, permanent_at = '2026-01-01' WHERE id = %s",
        (node.pk,),
    )
    assert failing("permanent_without_event") == [
        f"node {node.pk} is permanent but has no promoted_permanent event"
    ]


@pytest.mark.django_db(transaction=True)
def test_it_reports_an_edge_touching_a_missing_node(make_note):
    node = make_note("Pointing at nothing.")
    insert = (
        "INSERT INTO memory_edge (from_node_id, to_node_id, kind, weight, created_at, created_by)"
        " VALUES (%s, 999999, 'cites', 1, '2026-01-01', 'x')"
    )
    if on_postgres():
        # Its foreign keys are checked at commit (DEFERRABLE INITIALLY DEFERRED): look before.
        with pytest.raises(RuntimeError, match="undo"), transaction.atomic():
            raw(insert, (node.pk,))
            (violation,) = failing("edges_touching_missing_nodes")
            assert f"({node.pk} -> 999999) touches a missing node" in violation
            raise RuntimeError("undo")
        return
    raw("PRAGMA foreign_keys = OFF", savepoint=False)  # takes only outside a transaction
    raw(insert, (node.pk,))
    (violation,) = failing("edges_touching_missing_nodes")
    assert f"({node.pk} -> 999999) touches a missing node" in violation
    raw("PRAGMA foreign_keys = ON", savepoint=False)


@pytest.mark.sqlite_only  # FTS5's rows; PostgreSQL's check: tests/schema/test_postgres.py
def test_it_reports_a_node_missing_from_the_full_text_index(make_note):
    node = make_note("Unsearchable words.")
    raw(
        "INSERT INTO memory_node_fts(memory_node_fts, rowid, body) VALUES ('delete', %s, %s)",
        (node.pk, node.body),
    )
    violations = failing("fts_out_of_sync")
    assert f"node {node.pk} has no full-text row" in violations


@pytest.mark.sqlite_only  # FTS5's rows; PostgreSQL's check: tests/schema/test_postgres.py
def test_it_reports_a_full_text_row_that_disagrees_with_the_body(make_note):
    node = make_note("Original words.")
    raw(
        "INSERT INTO memory_node_fts(memory_node_fts, rowid, body) VALUES ('delete', %s, %s)",
        (node.pk, node.body),
    )
    raw("INSERT INTO memory_node_fts(rowid, body) VALUES (%s, 'forged words')", (node.pk,))
    violations = failing("fts_out_of_sync")
    assert any("disagrees with node bodies" in v for v in violations)


def test_the_command_exits_non_zero_on_a_violation(make_note, capsys):
    node = make_note("Gone without a word.")
    raw("UPDATE memory_node SET decayed_at = '2026-02-01' WHERE id = %s", (node.pk,))
    with pytest.raises(CommandError, match="integrity check"):
        call_command("integrity")
    out = capsys.readouterr().out
    assert "decayed_without_event: FAIL (1)" in out
    assert f"node {node.pk} is decayed but has no decayed event" in out


def decay_raw(node_id: int, reason: str, detail: dict | None = None) -> None:
    """Flag a node decayed with its event, as a faulty sweep would (raw SQL + the writer),
    recording the threshold a sweep records unless `detail` says otherwise."""
    with transaction.atomic():
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        raw("UPDATE memory_node SET decayed_at = %s WHERE id = %s", (now, node_id))
        detail = {"min_age_days": 14} if detail is None else detail
        audit.record("decayed", node=node_id, actor="sleep", reason=reason, detail=detail)


def test_it_reports_a_live_node_holding_a_decayed_one(make_note, root_note):
    child = make_note("Derived from the notebook, still live.")
    decay_raw(root_note.pk, "unreachable")
    assert failing("live_node_holds_decayed_node") == [
        f"live node {child.pk} holds decayed node {root_note.pk} (derived_from)"
    ]


def test_the_owners_let_go_of_a_held_node_is_no_violation(make_note, root_note):
    make_note("Derived from the notebook, still live.")
    decay_raw(root_note.pk, "owner_let_go")
    assert failing("live_node_holds_decayed_node") == []


def test_it_reports_a_root_decayed_as_unreachable(make_note):
    read_one = make_note("Read by an agent.", days_old=40)
    young = make_note("Written today.")
    raw("UPDATE memory_node SET access_count = 1 WHERE id = %s", (read_one.pk,))
    decay_raw(read_one.pk, "unreachable")
    decay_raw(young.pk, "unreachable")
    assert failing("root_decayed") == [
        f"root node {read_one.pk} (read) was decayed as unreachable",
        f"root node {young.pk} (young) was decayed as unreachable",
    ]


def test_integrity_judges_the_flag_by_the_latest_lifecycle_event(make_note):
    from memory.custody.integrity import lifecycle_flag_disagrees_with_latest_event
    from memory.forgetting import let_go, restore

    node = make_note("decayed once, then restored")
    let_go(node.pk, actor="owner")
    restore(node.pk, actor="owner")
    kinds = list(Event.objects.filter(node=node).order_by("id").values_list("kind", flat=True))
    assert kinds[-2:] == [EventKind.DECAYED, EventKind.RESTORED]
    assert lifecycle_flag_disagrees_with_latest_event() == []
    Node.objects.filter(pk=node.pk).update(decayed_at=node.created_at)  # the flag now lies
    assert lifecycle_flag_disagrees_with_latest_event() != []


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("created_at", "2020-01-01 00:00:00"),
        ("referent_time", "2020-01-01 00:00:00"),
        ("content_key", "f" * 64),
        ("metadata", '{"forged": true}'),
    ],
)
def test_it_names_each_field_edited_behind_the_node_trigger(make_note, column, value):
    node = make_note("Every field on the record.")
    assert failing("nodes_disagree_with_arrival") == []
    drop_trigger("memory_node_immutable")
    raw(f"UPDATE memory_node SET {column} = %s WHERE id = %s", (value, node.pk))
    assert failing("nodes_disagree_with_arrival") == [
        f"node {node.pk}: {column} differ from its arrival"
    ]


def test_it_names_a_token_given_to_a_node_behind_the_trigger(make_note):
    from memory.tokens import create_token

    node = make_note("Written by the owner, no token.")
    token, _ = create_token(name="forger", domains=["personal"])
    drop_trigger("memory_node_immutable")
    raw("UPDATE memory_node SET token_id = %s WHERE id = %s", (token.pk, node.pk))
    assert failing("nodes_disagree_with_arrival") == [
        f"node {node.pk}: token_id differ from its arrival"
    ]


def test_a_decay_is_judged_by_the_threshold_it_was_made_under(make_note, settings):
    from memory.sleep.decay import decay

    old = make_note(
        "Twenty days old, never read.",
        days_old=20,
        origins=[],
        kind="import",
        jurisdiction="wild",
        source="old.md",
    )
    assert decay()["count"] >= 1 and Node.objects.get(pk=old.pk).decayed_at is not None
    event = Event.objects.get(node=old, kind="decayed")
    assert event.detail["min_age_days"] == 14
    settings.GROVE_DECAY_MIN_AGE_DAYS = 30
    assert failing("root_decayed") == []


def test_a_decay_recorded_without_its_threshold_is_not_judged_young(make_note, settings):
    young = make_note("Written today.")
    decay_raw(young.pk, "unreachable", detail={})
    assert "min_age_days" not in Event.objects.get(node=young, kind="decayed").detail
    assert failing("root_decayed") == []


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("domain", "work"),
        ("kind", "journal"),
        ("jurisdiction", "wild"),
        ("signature", "forger"),
        ("source", "elsewhere.md"),
    ],
)
def test_it_names_each_arrival_column_changed_behind_the_node_trigger(make_note, column, value):
    node = make_note("Every column the arrival describes.")
    assert failing("nodes_disagree_with_arrival") == []
    drop_trigger("memory_node_immutable")
    raw(f"UPDATE memory_node SET {column} = %s WHERE id = %s", (value, node.pk))
    assert failing("nodes_disagree_with_arrival") == [
        f"node {node.pk}: {column} differ from its arrival"
    ]
