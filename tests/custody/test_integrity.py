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


def test_it_reports_a_decayed_node_whose_latest_event_restored_it(make_note):
    from memory.forgetting import let_go

    node = make_note("Restored on the record, still decayed in its row.")
    let_go(node.pk, actor="owner")
    assert failing("lifecycle_flag_disagrees_with_latest_event") == []
    with transaction.atomic():
        audit.record("restored", node=node.pk, actor="owner", reason="owner_restore")
    assert failing("lifecycle_flag_disagrees_with_latest_event") == [
        f"node {node.pk} is decayed but its latest lifecycle event is restored"
    ]


def test_it_names_a_root_the_owner_kept_before_its_decay(make_note):
    kept = make_note("Kept by the owner, then swept.", days_old=40)
    late = make_note("Swept, then kept by the owner.", days_old=40)
    with transaction.atomic():
        audit.record("kept", node=kept.pk, actor="owner", reason="")
    decay_raw(kept.pk, "unreachable")
    decay_raw(late.pk, "unreachable")
    with transaction.atomic():
        audit.record("kept", node=late.pk, actor="owner", reason="")  # after: no root then
    assert failing("root_decayed") == [f"root node {kept.pk} (owned) was decayed as unreachable"]


def test_it_names_a_ground_root_by_its_trust(make_note):
    from tests._helpers.acts import root_as_owner

    node = make_note("Adopted by the owner, then swept.", days_old=40)
    root_as_owner(node)
    decay_raw(node.pk, "unreachable")
    assert failing("root_decayed") == [f"root node {node.pk} (ground) was decayed as unreachable"]


def test_a_root_exactly_as_old_as_the_threshold_is_no_longer_young(make_note):
    from datetime import timedelta

    def decay_at_age(node: Node, age: timedelta) -> None:
        gone = connection.ops.adapt_datetimefield_value(node.created_at + age)
        with transaction.atomic():
            raw("UPDATE memory_node SET decayed_at = %s WHERE id = %s", (gone, node.pk))
            audit.record(
                "decayed",
                node=node.pk,
                actor="sleep",
                reason="unreachable",
                detail={"min_age_days": 14},
            )

    of_age = make_note("Fourteen days old to the microsecond.", days_old=20)
    short = make_note("A second short of fourteen days.", days_old=20)
    decay_at_age(of_age, timedelta(days=14))
    decay_at_age(short, timedelta(days=14) - timedelta(seconds=1))
    assert failing("root_decayed") == [f"root node {short.pk} (young) was decayed as unreachable"]


def test_roots_whose_words_are_as_adopted_agree_with_their_verdicts(make_note):
    from tests._helpers.acts import root_as_owner, supersede_as_owner

    kept, swapped, replaced = (make_note(f"Adopted words number {i}.") for i in range(3))
    for node in (kept, swapped, replaced):
        root_as_owner(node)
    supersede_as_owner(replaced, "Adopted words, revised.")
    assert failing("verdicts_disagree_with_body") == []
    drop_trigger("memory_node_immutable")
    raw("UPDATE memory_node SET body = 'Forged words.' WHERE id = %s", (swapped.pk,))
    (violation,) = failing("verdicts_disagree_with_body")
    assert violation.endswith(f"node {swapped.pk}'s body no longer has")


def test_every_scroll_is_verified_not_only_the_last(db, tmp_path, settings):
    from memory.scroll import commit_turn, scroll_dir

    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    commit_turn(conversation="a-porch", user="Rain?", assistant="Yes, at six.")
    commit_turn(conversation="b-yard", user="Wind?", assistant="None today.")
    path = scroll_dir() / "a-porch.jsonl"
    path.write_text(path.read_text().replace("at six", "at ten"))
    violations = failing("scrolls_disagree_with_pairs")
    assert violations and all(v.startswith("scroll a-porch.jsonl: ") for v in violations)


def test_the_chain_is_read_from_its_checkpoint_unless_asked_for_all_of_it(make_note):
    from memory.custody.chain_verify import verify_from_checkpoint
    from memory.custody.integrity import hash_chain

    make_note("Checked once.")
    first = Event.objects.order_by("id").first()
    assert verify_from_checkpoint().ok  # a checkpoint past the event edited below
    drop_trigger("memory_event_no_update")
    raw("UPDATE memory_event SET reason = 'forged' WHERE id = %s", (first.pk,))
    assert failing("hash_chain") == [] and hash_chain() == []
    (result,) = run_checks(["hash_chain"], full_chain=True)
    assert result.violations and result.violations[0].startswith(f"event {first.pk} ")


def test_an_arrival_from_before_the_metadata_hash_is_not_judged_on_metadata(make_note):
    import json

    node = make_note("Arrived before arrivals recorded a metadata hash.")
    arrival = Event.objects.get(node=node, kind="arrived")
    detail = {k: v for k, v in arrival.detail.items() if k != "metadata_hash"}
    drop_trigger("memory_event_no_update")
    raw("UPDATE memory_event SET detail = %s WHERE id = %s", (json.dumps(detail), arrival.pk))
    drop_trigger("memory_node_immutable")
    raw("UPDATE memory_node SET metadata = %s WHERE id = %s", ('{"later": true}', node.pk))
    assert failing("nodes_disagree_with_arrival") == []


def test_it_names_every_field_edited_at_once(make_note):
    node = make_note("Two columns changed in one statement.")
    drop_trigger("memory_node_immutable")
    raw("UPDATE memory_node SET domain = 'work', source = 'elsewhere.md' WHERE id = %s", (node.pk,))
    assert failing("nodes_disagree_with_arrival") == [
        f"node {node.pk}: domain, source differ from its arrival"
    ]
