"""Upgrades: a database migrated by an earlier release must migrate forward. Django refuses
(InconsistentMigrationHistory) when a migration it applied gains a dependency it did not apply,
so a new migration may only come after what was released, never be slotted in before it."""

from __future__ import annotations

from django.db.migrations.loader import MigrationLoader

# The memory app's migrations as released (the graph on main when they landed).
RELEASED = {
    "0001_initial",
    "0002_invariants",
    "0003_speed_indexes",
    "0004_read_days",
    "0005_custody",
    "0006_declined",
    "0007_referent_time_index",
    "0008_trigram",
    "0013_postgres",
    "0014_entities",
    "0015_last_read_by",
    "0016_event_partial_indexes",
    "0017_liveness_partial_indexes",
    "0018_fk_prefix_indexes",
    "0019_decays_released",
    "0020_recalllog_dig",
    "0021_source_width",
    "0022_truncate_guard_test_databases",
    "0023_event_batch_index",
    "0024_token_grants",
    "0025_agents_governance",
    "0026_drift_accepted",
    "0027_session_files",
    "0028_token_guard",
}


def _graph():
    return MigrationLoader(None, ignore_no_migrations=True).graph  # files only, no database


def released_migrations_depend_only_on_released(graph) -> list[str]:
    wrong = []
    for name in sorted(RELEASED):
        for app, ancestor in graph.forwards_plan(("memory", name)):
            if app == "memory" and ancestor not in RELEASED:
                wrong.append(f"{name} now depends on {ancestor}")
    return wrong


def test_every_released_migration_depends_only_on_released_ones():
    graph = _graph()
    assert {name for app, name in graph.nodes if app == "memory"} >= RELEASED
    assert released_migrations_depend_only_on_released(graph) == []
    assert len([n for n in graph.leaf_nodes() if n[0] == "memory"]) == 1


def test_a_migration_slotted_in_before_a_released_one_is_caught():
    graph = _graph()
    graph.add_node(("memory", "0009_slotted"), None)
    graph.add_dependency("test", ("memory", "0013_postgres"), ("memory", "0009_slotted"))
    wrong = released_migrations_depend_only_on_released(graph)
    # 0013 and every released migration after it now depend on the slotted one.
    assert "0013_postgres now depends on 0009_slotted" in wrong
    assert all(line.endswith("now depends on 0009_slotted") for line in wrong)
