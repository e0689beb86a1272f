"""Recall's ranking, its explanations and sleep's holdings: behaviours that round 5's
whole-module, one-child mutation run of memory.recall, memory.recall.rank, memory.recall.why and
memory.reach found no test pinned (issue 16, docs/mutation.md "Round 5"). Each test is
named for the behaviour it holds; unit level, real SQLite, no browser and no worker."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from threadpoolctl import ThreadpoolController

import memory.vectors.matrix as matrix_module
from memory import reach
from memory.models import Node
from memory.packets import EXCERPT_CHARS, excerpt_of, packet
from memory.reach import holdings
from memory.recall import lexical, rank
from memory.recall.entities import record_mentions
from memory.recall.rank import (
    _add,
    _choose,
    _entity_expand,
    _expand,
    _feedback,
    _lawful,
    _lift,
    _neighbours,
)
from memory.recall.why import WHY_CHARS, explain, reasons
from memory.vectors.matrix import _coarse_index, _coarse_rows, _reserve, exact_candidates
from memory.visibility import Visibility
from review.ceremony import root
from tests._helpers.events import mark
from tests._helpers.nodes import store
from tests._helpers.texts import OTHER, SEEKER
from tests._helpers.vectors import matrix_of

EVERYTHING = Visibility.of(domains=None, scope="both", as_of=None)


@pytest.fixture(autouse=True)
def _fresh_document_counts():
    # Document counts are cached per database name and term; ids restart with each test's
    # rollback, so a count cached by an earlier test could speak of other rows.
    lexical._df_cache.clear()
    yield
    lexical._df_cache.clear()


def test_each_list_adds_its_scores_over_its_best_times_its_weight():
    scores = {2: 0.25}
    _add(scores, [(1, 4.0), (2, 2.0)], 0.5)
    assert scores == {1: 0.5, 2: 0.5}
    _add(scores, [(4, 0.5), (1, 0.25)], 1.0)  # a best below 1 (cosines) counts as well
    _add(scores, [(3, 0.0)], 1.0)  # a best of 0: nothing to divide by, nothing added
    _add(scores, [(3, 1.0)], 0.0)  # a list weighted 0 adds no node, not even at 0
    _add(scores, [], 1.0)
    assert scores == {1: 1.0, 2: 0.5, 4: 1.0}


def test_ranks_trust_is_as_of_the_instant_asked_for(make_note):
    node = make_note("Rooted after the instant.")
    then = timezone.now()
    root(node.pk, adopting_words="I hold this.", expected_body_hash=node.body_hash, owner="owner")
    view = Visibility.of(domains=None, scope="both", as_of=then)
    assert _lawful([node.pk], view, False) == {node.pk: "unreviewed"}


def test_the_session_lift_raises_candidates_sharing_a_parent_above_a_lone_one(make_note, lone):
    c, a, b = lone("Alone, the oldest."), make_note("Session, first."), make_note("Second.")
    scores = {c.pk: 1.0, a.pk: 0.6, b.pk: 0.6}
    with rank.using(session=1.0):
        assert _choose([c.pk, a.pk, b.pk], scores, 2) == [a.pk, b.pk]
        assert scores == {c.pk: 1.0, a.pk: 1.2, b.pk: 1.2}  # 0.6 * (1 + 1.2 / 1.2)
        two = {a.pk: 0.5, b.pk: 0.5}
        assert _choose([a.pk, b.pk], two, 2) == [a.pk, b.pk] and two == {a.pk: 1.0, b.pk: 1.0}


def test_without_lift_or_diversity_the_order_given_is_kept(make_note):
    # The reranker's order, which the scores alone would undo.
    a, b = make_note("First by score."), make_note("First by the reranker.")
    assert _choose([b.pk, a.pk], {a.pk: 1.0, b.pk: 0.5}, 2) == [b.pk, a.pk]


def test_a_neighbour_decayed_at_the_instant_is_not_lifted_as_of_it(make_note):
    seed, other = make_note("Seed."), make_note("Decayed, then restored.")
    now = timezone.now()
    mark(other, "decayed", at=now - timedelta(hours=2))
    mark(other, "restored", at=now)
    Node.objects.filter(pk=other.pk).update(decayed_at=None)
    then = Visibility.of(domains=None, scope="both", as_of=now - timedelta(hours=1))
    near = {seed.pk: [(other.pk, "responds_to")]}
    for view, expected in ((then, {}), (EVERYTHING, {other.pk: (seed.pk, "responds_to")})):
        assert _lift([seed.pk], near, 1.0, {seed.pk: 1.0}, {seed.pk: "x"}, view, False) == expected


def test_a_neighbours_trust_is_as_of_the_instant_and_superseded_when_asked_for(make_note):
    seed, later, old = make_note("Seed."), make_note("Rooted later."), make_note("Superseded.")
    mark(old, "superseded")
    then = timezone.now()
    root(later.pk, adopting_words="I hold this.", expected_body_hash=later.body_hash, owner="owner")
    near = {seed.pk: [(later.pk, "cites"), (old.pk, "cites")]}
    trusts = {seed.pk: "x"}
    view = Visibility.of(domains=None, scope="both", as_of=then)
    _lift([seed.pk], near, 1.0, {seed.pk: 1.0}, trusts, view, True)
    assert trusts == {seed.pk: "x", later.pk: "unreviewed", old.pk: "superseded"}


def test_a_neighbour_gains_half_its_best_seeds_score_times_the_weight_first_seed_on_ties(
    make_note,
):
    s1, s2, s3, n, m = (make_note(f"Node {i}.") for i in range(5))
    scores = {s1.pk: 1.0, s2.pk: 0.8, s3.pk: 1.0, n.pk: 0.1}
    trusts = dict.fromkeys(scores, "unreviewed")
    near = {
        s1.pk: [(n.pk, "cites")],
        s2.pk: [(n.pk, "answers"), (m.pk, "cites")],
        s3.pk: [(n.pk, "answers")],
    }
    via = _lift([s1.pk, s2.pk, s3.pk], near, 0.5, scores, trusts, EVERYTHING, False)
    assert via == {n.pk: (s1.pk, "cites"), m.pk: (s2.pk, "cites")}
    assert scores[n.pk] == pytest.approx(0.35) and scores[m.pk] == pytest.approx(0.2)


def test_the_edge_expansion_reaches_a_superseded_reply_when_asked_for_superseded(make_note):
    seed = make_note("The heron stood in the reeds.")
    reply = make_note("Superseded reply.", origins=[{"id": seed.pk, "relation": "responds_to"}])
    mark(reply, "superseded")
    for include, expected in ((True, {reply.pk: (seed.pk, "responds_to")}), (False, {})):
        trusts = {seed.pk: "unreviewed"}
        assert _expand([seed.pk], {seed.pk: 1.0}, trusts, EVERYTHING, include) == expected


def test_each_further_turn_of_a_reply_chain_inherits_half_the_last_ones_weight(make_note):
    a = make_note("The heron stood in the reeds.")
    b = make_note("Reply one.", origins=[{"id": a.pk, "relation": "responds_to"}])
    c = make_note("Reply two.", origins=[{"id": b.pk, "relation": "responds_to"}])
    d = make_note("Reply three.", origins=[{"id": c.pk, "relation": "responds_to"}])
    mark(d, "superseded")
    scores, trusts = {a.pk: 1.0}, {a.pk: "unreviewed"}
    with rank.using(reach=3, neighbour=1.0, reach_decay=0.5):
        via = _expand([a.pk], scores, trusts, EVERYTHING, True)
    assert via == {
        b.pk: (a.pk, "responds_to"),
        c.pk: (a.pk, "responds_to, 2 turns"),
        d.pk: (a.pk, "responds_to, 3 turns"),
    }
    assert scores == {a.pk: 1.0, b.pk: 0.5, c.pk: 0.25, d.pk: 0.125}


def test_the_neighbours_as_of_an_instant_are_over_the_edges_existing_then(make_note):
    a = make_note("Seed.")
    b = make_note("Reply.", origins=[{"id": a.pk, "relation": "responds_to"}])
    then = timezone.now()
    make_note("A later reply.", origins=[{"id": a.pk, "relation": "responds_to"}])
    view = Visibility.of(domains=None, scope="both", as_of=then)
    assert _neighbours([a.pk], view) == {a.pk: [(b.pk, "responds_to")]}


def _fed(scores: dict[int, float], **weights) -> tuple[list[str], set[int]]:
    trusts = dict.fromkeys(scores, "unreviewed")
    with rank.using(feedback=1.0, **weights):
        return _feedback(scores, ["query"], EVERYTHING, trusts, False)


def test_feedback_reads_the_best_scored_hits_not_the_newest_or_the_worst(db):
    a, b, c, d = store(
        "Kingfisher on the weir.", "Kingfisher at dawn.", "Osprey over it.", "Osprey again."
    )
    scores = {a.pk: 1.0, b.pk: 0.9, c.pk: 0.2, d.pk: 0.1}
    assert _fed(scores, feedback_docs=2) == (["kingfisher"], {a.pk, b.pk})


def test_feedback_words_are_longer_than_two_letters_and_not_numbers(db):
    a, b = store("Owl ox 1999 marsh.", "Owl ox 1999 fen.")
    assert _fed({a.pk: 1.0, b.pk: 0.9}) == (["owl"], {a.pk, b.pk})


def test_a_feedback_word_is_rare_in_at_most_five_documents_of_a_small_store(db):
    # Five documents hold kingfisher and six hold heron; with 11 nodes, 2% is under five.
    nodes = store(
        *["Kingfisher and heron."] * 2, *["Kingfisher."] * 3, *["Heron."] * 4, "Egret.", "Ibis."
    )
    a, b = nodes[0], nodes[1]
    assert _fed({a.pk: 1.0, b.pk: 0.9}) == (["kingfisher"], set(range(1, 6)))


def test_feedback_words_come_most_shared_first(db):
    nodes = store("Apple orchard.", "Apple zebra.", "Zebra crossing.", "Zebra stripes.")
    scores = {n.pk: 1.0 - n.pk / 10 for n in nodes}
    assert _fed(scores, feedback_docs=4, feedback_terms=1)[0] == ["zebra"]


@pytest.mark.sqlite_only  # FTS5's unicode61 does not fold ß, so "strasse" does not find it
def test_a_shared_word_the_index_finds_in_one_document_is_fed_back(db):
    a, b = store("Straße im Regen.", "Strasse im Schnee.")
    assert _fed({a.pk: 1.0, b.pk: 0.9}) == (["strasse"], {b.pk})


@pytest.mark.sqlite_only  # as above
def test_a_shared_word_the_index_cannot_find_is_not_fed_back(db):
    a, b = store("Straße im Regen.", "Straße im Schnee.")
    assert _fed({a.pk: 1.0, b.pk: 0.9}) == ([], set())


def test_the_entity_expansion_reaches_a_superseded_node_when_asked_for_superseded(make_note):
    seeker, other = make_note(SEEKER), make_note(OTHER)
    mark(other, "superseded")
    record_mentions(after_id=0, limit=None)
    for include, expected in ((True, {other.pk: (seeker.pk, "ottoline brackwater")}), (False, {})):
        trusts = {seeker.pk: "unreviewed"}
        with rank.using(entity=1.0):
            found = _entity_expand([seeker.pk], {seeker.pk: 1.0}, trusts, EVERYTHING, include)
        assert found == expected


@dataclass
class _Placed:
    id: int
    why: list[str] = field(default_factory=list)


def test_why_names_only_the_selective_query_words_a_body_holds(db):
    # 52 of 52 documents hold "common": past the common share, it is not a selective term.
    (heron, *_) = store("Heron, common.", *["Common."] * 51)
    assert explain([_Placed(heron.pk, ["words"])], ["heron", "common"]) == {
        heron.pk: "words: heron"
    }


def test_why_says_related_when_no_list_or_edge_explains_a_node(db):
    (node,) = store("Nothing matched.")
    assert explain([_Placed(node.pk)], ["heron"]) == {node.pk: "related"}


def test_why_keeps_a_line_of_exactly_its_bound_and_cuts_a_longer_one_to_it(db):
    a, b = store("One.", "Two.")
    found = explain([_Placed(a.pk, ["x" * WHY_CHARS]), _Placed(b.pk, ["y" * 161])], ["z"])
    assert found == {a.pk: "x" * WHY_CHARS, b.pk: "y" * (WHY_CHARS - 1) + "…"}


def test_each_reason_has_its_own_words_in_the_lists_order_then_edge_entity_and_speaker():
    lists = {
        "substring": {2: 1.0},  # a list without the node is passed over, not the end
        "words": {1: 2.0},
        "vector": {1: 0.876},
        "date": {1: 0.3},
        "feedback": {1: 0.0},
    }
    tags = reasons(
        1, lists, {"feedback": "kingfisher"}, {1: (7, "cites")}, signer=True, entity=(7, "ada")
    )
    assert tags == [
        "words",
        "vector 0.88",
        "date named",
        "feedback: kingfisher",
        "via #7 (cites)",
        "entity: ada",
        "speaker named",
    ]


def test_an_excerpt_folds_whitespace_and_cuts_past_its_bound_with_an_ellipsis():
    assert excerpt_of(" a\n\tb  c ") == "a b c"
    whole = "x" * EXCERPT_CHARS
    assert excerpt_of(whole) == whole
    cut = "y" * (EXCERPT_CHARS - 2) + " zz"  # the cut falls after a space, which goes
    assert excerpt_of(cut) == "y" * (EXCERPT_CHARS - 2) + "…"
    assert excerpt_of(whole + "x") == "x" * (EXCERPT_CHARS - 1) + "…"


def test_a_packet_is_the_preview_in_its_order_with_the_score_to_six_places():
    row = {"jurisdiction": "home", "id": 7, "kind": "note", "body": "A  body.", "source": "s"}
    row |= {"signature": "owner", "more": False}
    found = packet(row, trust="ground", score=np.float32(0.5) / 3)
    assert list(found.items()) == [
        ("jurisdiction", "home"),
        ("id", 7),
        ("trust", "ground"),
        ("kind", "note"),
        ("excerpt", "A body."),
        ("source", "s"),
        ("score", 0.166667),
    ]
    assert "score" not in packet(row, trust="ground")


def test_a_full_matrix_is_not_grown_until_a_row_more_is_needed():
    matrix = matrix_of(np.ones((10, 8), dtype=np.float32))
    full, vectors = len(matrix.ids), matrix.vectors
    _reserve(matrix, full)
    assert len(matrix.ids) == full and matrix.vectors is vectors
    before = [a[:10].tolist() for a in (matrix.ids, matrix.domain_codes, matrix.wild)]
    created = matrix.created[:10].tolist()
    _reserve(matrix, full + 1)
    assert len(matrix.ids) == len(matrix.vectors) == int(full * 1.25) + 1024
    assert [a[:10].tolist() for a in (matrix.ids, matrix.domain_codes, matrix.wild)] == before
    assert matrix.created[:10].tolist() == created and matrix.vectors.dtype == np.float32
    assert matrix.vectors[:10].tolist() == vectors[:10].tolist()


def test_the_float16_copy_is_kept_not_rebuilt_when_no_row_was_added():
    matrix = matrix_of(np.random.default_rng(5).standard_normal((10, 8)).astype(np.float32))
    first = _coarse_index(matrix)
    assert first.ntotal == 10 and _coarse_index(matrix) is first


def test_no_visible_row_is_an_empty_list_of_row_indices(monkeypatch):
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    matrix = matrix_of(np.random.default_rng(7).standard_normal((55, 8)).astype(np.float32))
    hidden = np.zeros(55, dtype=bool)
    rows = _coarse_rows(matrix, 55, matrix.vectors[0], hidden, 5)
    assert rows is not None and matrix.ids[rows].tolist() == []  # float indices would raise


def test_the_float16_pass_keeps_the_first_row_when_rows_were_added_meanwhile(monkeypatch):
    # The copy holds 58 rows, the recall reads 55 (three were appended under it): rows 0-54
    # are searched, the first one included.
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    vectors = np.zeros((58, 8), dtype=np.float32)
    vectors[:, 1] = 1.0
    vectors[:5, 0] = [10, 9, 8, 7, 6]
    matrix = matrix_of(vectors)
    rows = _coarse_rows(matrix, 55, np.eye(8, dtype=np.float32)[0], None, 5)
    assert rows is not None and rows.tolist() == [0, 1, 2, 3, 4]


def test_the_exact_top_one_holds_when_float16_rounding_swaps_two_rows(monkeypatch):
    # Row 0 scores 20004.8 and row 1 20001.6, but in float16 (steps of 0.5 near 1000) row 0
    # reads 10 * (1000 + 1000) and row 1 10 * (1000.5 + 1000): the margin, scaled by |q| and by
    # the largest row norm, keeps both for the float32 rescoring. (The embedder's vectors are
    # unit vectors; the bound holds for any.)
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    vectors = np.zeros((55, 8), dtype=np.float32)
    vectors[:, 2] = 1.0
    vectors[0, :2], vectors[1, :2] = [1000.24, 1000.24], [1000.26, 999.9]
    q = np.array([10, 10, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    assert [i for i, _ in exact_candidates(matrix_of(vectors), q, EVERYTHING, 1)] == [1]


def test_the_float16_pass_rescores_only_rows_within_twice_its_error_of_the_kth(monkeypatch):
    # |q| = 1 and the largest row norm is 1000: twice the error is 1.18 (three times, 1.76).
    monkeypatch.setattr(matrix_module, "COARSE_ROWS", (50, 60))
    vectors = np.zeros((55, 8), dtype=np.float32)
    vectors[:, 2] = 1.0
    vectors[0, 0], vectors[1, 0], vectors[2, 1] = 10.0, 8.5, 1000.0
    q = np.eye(8, dtype=np.float32)[0]
    assert _coarse_rows(matrix_of(vectors), 55, q, None, 1).tolist() == [0]
    # Only the last row fetched decides whether rows past the fetch may qualify.
    vectors[1, 0] = 9.5
    assert _coarse_rows(matrix_of(vectors), 55, q, None, 1).tolist() == [0, 1]


class _Probe(np.ndarray):
    """The matrix's rows, noting the BLAS thread counts in force at each product with them."""

    threads: list[list[int]] = []

    def __matmul__(self, other):
        blas = ThreadpoolController().select(user_api="blas").info()
        _Probe.threads.append([lib["num_threads"] for lib in blas])
        return np.asarray(self) @ other


def test_the_exact_scan_multiplies_on_one_blas_thread():
    matrix = matrix_of(np.random.default_rng(6).standard_normal((10, 8)).astype(np.float32))
    matrix.vectors = matrix.vectors.view(_Probe)
    _Probe.threads = []
    found = exact_candidates(matrix, matrix.vectors[3].view(np.ndarray), EVERYTHING, 1)
    assert found[0][0] == 4 and _Probe.threads and all(t == 1 for ts in _Probe.threads for t in ts)


def test_holdings_compare_ids_exactly_past_two_to_the_53():
    # 2**53 + 1 has no float64 of its own: read as a float it would equal 2**53.
    edges = (np.array([2**53], dtype=np.int64), np.array([7], dtype=np.int64))
    assert holdings({2**53 + 1}, edges) == {2**53 + 1}
    assert holdings({2**53}, edges) == {2**53, 7}


@pytest.mark.sqlite_only  # SQLite takes a partial index only when the query repeats its terms
def test_the_candidates_read_can_use_the_partial_decay_index(lone):
    old = lone("Old and unread.", days_old=40)
    with CaptureQueriesContext(connection) as queries:
        found = reach.candidates(timezone.now() - timedelta(days=14))
    assert found.tolist() == [old.pk]
    (read,) = [q["sql"] for q in queries.captured_queries if "access_count = 0" in q["sql"]]
    # INDEXED BY fails ("no query solution") when the WHERE does not imply the index's terms.
    forced = read.replace(
        "FROM memory_node n", "FROM memory_node n INDEXED BY memory_node_decay_candidates"
    )
    assert forced != read, read
    with connection.cursor() as cursor:
        cursor.execute(forced)
        assert cursor.fetchone()[0] == str(old.pk * 2 + 1)  # the id, and old at the one cutoff
