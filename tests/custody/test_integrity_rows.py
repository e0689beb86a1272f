"""The row-by-row integrity checks read a table from its first id and past every batch they read
it in (memory/custody/integrity.py): a full run that skipped row 1, or stopped after the first
batch, would call a broken store clean."""

from __future__ import annotations

import numpy as np
import pytest

from memory.custody.integrity import CHECKS, MAX_EXAMPLES, run_checks
from tests._helpers.vendor import drop_trigger, raw

NODE_COLUMNS = (
    "body, body_hash, content_key, jurisdiction, kind, domain, signature, source, metadata,"
    " created_at, scroll_path, scroll_hash, access_count, permanent"
)


def put_node(node_id: int, body: str, *, metadata: str = "{}") -> None:
    """A node written past the write path, with the id given and a body_hash that is not its
    body's (what body_hash_mismatch must name)."""
    raw(
        f"INSERT INTO memory_node (id, {NODE_COLUMNS}) VALUES (%s, %s, %s, %s, 'wild', 'import',"
        " 'personal', 'raw', 'a.md', %s, '2026-01-01', '', '', 0, FALSE)",
        (node_id, body, "0" * 64, "0" * 64, metadata),
    )


def put_edge(edge_id: int, src: int, dst: int, kind: str) -> None:
    raw(
        "INSERT INTO memory_edge (id, from_node_id, to_node_id, kind, weight, created_at,"
        " created_by) VALUES (%s, %s, %s, %s, 1, '2026-01-01', 'raw')",
        (edge_id, src, dst, kind),
    )


def put_vector(vector_id: int, node_id: int, values: list[float]) -> None:
    raw(
        "INSERT INTO memory_vector (id, node_id, model, dim, data, created_at)"
        " VALUES (%s, %s, 'm', %s, %s, '2026-01-01')",
        (vector_id, node_id, len(values), np.array(values, dtype="<f4").tobytes()),
    )


# --- the first row ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_body_and_arrival_checks_read_the_first_node():
    put_node(1, "The first words.")
    assert CHECKS["body_hash_mismatch"]() == ["node 1: sha256 of the body is not its body_hash"]
    assert CHECKS["nodes_disagree_with_arrival"]() == [
        "node 1 has no arrival event: it joined no chain"
    ]


@pytest.mark.django_db
def test_the_nests_check_reads_the_first_edge():
    put_node(1, "A container of words.")
    put_node(2, "Not a part of it.")
    put_edge(1, 1, 2, "nests")
    assert CHECKS["nests_not_verbatim"]() == ["nests edge 1: node 2 is not verbatim in 1"]


@pytest.mark.django_db
def test_the_vector_check_reads_the_first_vector():
    put_node(1, "Embedded as nothing.")
    put_node(2, "Embedded well.")
    put_vector(1, 1, [0.0, 0.0])
    put_vector(2, 2, [0.0, 1.0])  # a fine vector next to it: not named
    assert CHECKS["vectors_nan_or_zero"]() == ["vector 1 (node 1) has zero norm"]


@pytest.mark.django_db
def test_the_edge_check_reads_the_first_edge():
    put_node(1, "Pointing at nothing.")
    # Foreign keys are checked at commit on both engines; the test's transaction never commits.
    put_edge(1, 1, 999999, "cites")
    found = CHECKS["edges_touching_missing_nodes"]()
    drop_trigger("memory_edge_no_delete")  # gone again before teardown checks the keys
    raw("DELETE FROM memory_edge WHERE id = 1")
    assert found == ["edge 1 (1 -> 999999) touches a missing node"]


# --- past the first batch ----------------------------------------------------------------------


def put_nodes(count: int) -> None:
    """`count` nodes in one statement, none of whose body_hash is its body's."""
    raw(
        f"""WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %s)
            INSERT INTO memory_node ({NODE_COLUMNS})
            SELECT 'words ' || i, %s, %s, 'wild', 'import', 'personal', 'raw', 'a.md', '{{}}',
                   '2026-01-01', '', '', 0, FALSE FROM s""",
        (count, "f" * 64, "0" * 64),  # a hash no engine reads as a number
    )


@pytest.mark.django_db
def test_the_body_and_arrival_checks_read_past_their_first_batch_of_two_thousand():
    put_nodes(2001)
    for name in ("body_hash_mismatch", "nodes_disagree_with_arrival"):
        found = CHECKS[name]()
        assert len(found) == 2001 and len(set(found)) == 2001, name


@pytest.mark.django_db
def test_the_vector_check_reads_past_its_first_chunk_of_five_thousand():
    # A node id above every vector id: a next chunk read from the wrong column finds nothing.
    put_node(10**9, "Embedded by many models.")
    raw(
        """WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 5001)
           INSERT INTO memory_vector (node_id, model, dim, data, created_at)
           SELECT %s, 'm' || i, 2, %s, '2026-01-01' FROM s""",
        (10**9, np.zeros(2, dtype="<f4").tobytes()),
    )
    found = CHECKS["vectors_nan_or_zero"]()
    assert len(found) == 5001 and len(set(found)) == 5001


# --- what run_checks hands on ------------------------------------------------------------------


@pytest.mark.django_db
def test_a_result_lists_its_first_examples_and_counts_the_rest():
    put_nodes(MAX_EXAMPLES)
    (result,) = run_checks(["body_hash_mismatch"])
    assert len(result.violations) == MAX_EXAMPLES and "more" not in result.violations[-1]
    put_nodes(1)
    (result,) = run_checks(["body_hash_mismatch"])
    assert len(result.violations) == MAX_EXAMPLES + 1
    assert result.violations[-1] == "... and 1 more"


@pytest.mark.django_db
def test_a_mark_the_record_lacks_reads_its_table_from_the_first_row():
    """A verified point recorded before a table had a mark carries no mark for it."""
    put_node(1, "The first words.")
    (result,) = run_checks(["body_hash_mismatch"], since={"vector": 10**9})
    assert result.violations == ["node 1: sha256 of the body is not its body_hash"]
    (result,) = run_checks(["body_hash_mismatch"], since={"node": 1})
    assert result.ok


@pytest.mark.sqlite_only  # PostgreSQL's jsonb cannot hold an empty text
@pytest.mark.django_db
def test_a_part_whose_metadata_was_blanked_behind_the_checks_is_named():
    put_node(1, "A container of words.")
    raw("PRAGMA ignore_check_constraints = ON", savepoint=False)  # as one holding the file could
    try:
        put_node(2, "A container", metadata="")
    finally:
        raw("PRAGMA ignore_check_constraints = OFF", savepoint=False)
    put_edge(1, 1, 2, "nests")
    assert CHECKS["nests_not_verbatim"]() == ["nests edge 1: node 2 is not verbatim in 1"]
