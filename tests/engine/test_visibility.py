"""Visibility (memory/visibility.py): which node a caller may see, and as of when. Scope and
domains, liveness as of an instant, trust filters, the id range a node may have, lookups cut into
chunks of ids, and the vector mask. The paths that apply these rules: test_visibility_matrix.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from datetime import timezone as tz

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from memory.errors import Invalid, NotFound
from memory.forgetting import let_go, restore
from memory.models import Edge, Node
from memory.trust import trust_map
from memory.visibility import (
    MAX_ID,
    Visibility,
    _aware,
    _with_authority_events,
    first_by_id,
    lawful,
    lawful_trust,
    live_at,
    node_in_domains,
    shown_trust,
    visible_ids,
)
from review.ceremony import root, seal
from tests._helpers.acts import root_as_owner, supersede_as_owner
from tests._helpers.plans import plans


def _copy_at(node: Node, pk: int) -> Node:
    """A copy of a node stored at an id of our choosing (the write path always takes the next).
    Made last in a test: after the top id SQLite's AUTOINCREMENT has no next id."""
    fields = {f.attname: getattr(node, f.attname) for f in Node._meta.concrete_fields}
    copy = Node(**{**fields, "id": pk})
    copy.save(force_insert=True)
    return copy


def test_the_highest_id_sqlite_holds_still_names_a_node(make_note) -> None:
    top = _copy_at(make_note("Stored at the very top of the id range."), MAX_ID)
    assert visible_ids([MAX_ID], domains=None) == {MAX_ID}
    assert node_in_domains(MAX_ID).pk == top.pk


def test_an_id_below_one_names_no_node_even_one_stored_there(make_note) -> None:
    _copy_at(make_note("Stored at id zero by hand."), 0)
    assert visible_ids([0], domains=None) == set()
    with pytest.raises(NotFound):
        node_in_domains(0)


# Ids no test node reaches: 1,799 of them put the next id past the first two chunks of 900,
# where a chunk loop stepping by one (start 0 to 899) no longer reaches.
FAR = [10**9 + i for i in range(1799)]


def test_liveness_trust_and_hiding_are_answered_past_two_chunks_of_ids(make_note) -> None:
    live, sealed = make_note("Live, the 1,800th id asked for."), make_note("Sealed, the last.")
    seal(sealed.pk, owner="owner")
    later = datetime.now(UTC) + timedelta(days=1)
    for as_of in (None, later):
        assert live_at([*FAR, live.pk], as_of=as_of) == {live.pk}
        assert sealed.pk not in lawful_trust(
            [*FAR, sealed.pk], as_of=as_of, include_superseded=True
        )
    assert trust_map([*FAR, sealed.pk])[sealed.pk] == "sealed"


def test_a_node_restored_after_its_decay_was_live_as_of_an_instant_after(make_note) -> None:
    node = make_note("Let go, then brought back.")
    let_go(node.pk, actor="owner")
    restore(node.pk, actor="owner")
    later = datetime.now(UTC) + timedelta(seconds=1)
    assert live_at([node.pk], as_of=later) == {node.pk}


# Ids no test node reaches: padding that fills a chunk of 900 without naming a node.
PADDING = [10**9 + i for i in range(899)]


def _vis(**kw) -> Visibility:
    return Visibility.of(
        domains=kw.get("domains"), scope=kw.get("scope", "both"), as_of=kw.get("as_of")
    )


def test_an_unknown_scope_is_refused_naming_the_scopes_there_are() -> None:
    with pytest.raises(Invalid) as refused:
        Visibility.of(domains=None, scope="garden", as_of=None)
    assert refused.value.code == "bad_scope"
    assert refused.value.message == "unknown scope 'garden'; expected one of: home, wild, both"


def test_a_bad_as_of_is_refused_by_its_field_name() -> None:
    with pytest.raises(Invalid) as refused:
        Visibility.of(domains=None, scope="both", as_of="yesterday-ish")
    assert refused.value.message.startswith("as_of ")


def test_a_dig_refuses_an_as_of_saying_it_looks_at_what_is_forgotten_now() -> None:
    with pytest.raises(Invalid) as refused:
        Visibility.of(domains=None, scope="both", as_of="2026-01-01T00:00:00Z", forgotten=True)
    assert refused.value.code == "bad_as_of"
    assert refused.value.message == "a dig looks at what is forgotten now; as_of is not allowed"


def test_a_single_domain_may_be_named_as_text_and_repeats_count_once() -> None:
    assert _vis(domains="work").domains == ("work",)
    assert _vis(domains=["work", "home", "work"]).domains == ("work", "home")


def test_no_domains_at_all_sees_nothing_where_none_sees_everything(make_note) -> None:
    node = make_note("Seen by the owner, by no caller of no domain.")
    assert node.pk in lawful([node.pk], _vis(domains=None))
    assert lawful([node.pk], _vis(domains=[])) == {}


def test_a_caller_of_two_domains_sees_the_nodes_of_each_and_no_other(make_note) -> None:
    work, home = make_note("At work.", domain="work"), make_note("At home.", domain="home")
    other = make_note("Elsewhere.", domain="other")
    shown = lawful([work.pk, home.pk, other.pk], _vis(domains=["work", "home"]))
    assert set(shown) == {work.pk, home.pk}


def test_the_default_alias_names_the_node_table_n(make_note) -> None:
    node = make_note("Found through the default alias.", domain="work")
    where, params = _vis(domains=["work"], scope="home").sql()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT n.id FROM memory_node n WHERE {where}", params)
        found = {row[0] for row in cursor.fetchall()}
    assert node.pk in found


def test_the_vector_mask_keeps_domain_scope_and_as_of_together() -> None:
    then = datetime(2026, 1, 2, tzinfo=UTC)
    t = then.timestamp()
    rows = {  # domain code, wild, created
        "domain": np.array([0, 1, 0, 0, 2]),
        "wild": np.array([False, False, True, False, False]),
        "created": np.array([t, t, t, t + 1, t - 5]),
    }
    codes = {"work": 0, "personal": 1, "other": 2}
    assert _vis().row_mask(codes=codes, **rows) is None
    home_work = _vis(domains=["work", "gone"], scope="home", as_of=then).row_mask(
        codes=codes, **rows
    )
    # Created exactly at as_of counts as existing then; a second later does not.
    assert home_work.tolist() == [True, False, False, False, False]
    wild = _vis(scope="wild").row_mask(codes=codes, **rows)
    assert wild.tolist() == [False, False, True, False, False]
    home_then = _vis(scope="home", as_of=then).row_mask(codes=codes, **rows)
    assert home_then.tolist() == [True, True, False, False, True]
    only_then = _vis(as_of=then).row_mask(codes=codes, **rows)
    assert only_then.tolist() == [True, True, True, False, True]
    mine_then = _vis(domains=["personal", "other"], as_of=then).row_mask(codes=codes, **rows)
    assert mine_then.tolist() == [False, True, False, False, True]


def test_liveness_is_answered_past_the_first_chunk_of_ids(make_note) -> None:
    first, last = make_note("First of the many ids."), make_note("Last of the many ids.")
    ids = [first.pk, *PADDING, last.pk]  # `last` opens the second chunk of 900
    assert live_at(ids, as_of=None) == {first.pk, last.pk}
    later = datetime.now(UTC) + timedelta(days=1)
    assert live_at(ids, as_of=later) == {first.pk, last.pk}


def test_a_decay_flag_at_the_very_instant_means_gone_then(make_note) -> None:
    node = make_note("Flagged without an event, as raw fixtures may do.")
    at = datetime(2026, 3, 1, 12, tzinfo=UTC)
    Node.objects.filter(pk=node.pk).update(decayed_at=at)
    assert live_at([node.pk], as_of=at) == set()
    assert live_at([node.pk], as_of=at - timedelta(microseconds=1)) == {node.pk}


def test_sealed_nodes_are_hidden_past_the_first_chunk_of_ids(make_note) -> None:
    first, last = make_note("Sealed first."), make_note("Sealed last.")
    for node in (first, last):
        seal(node.pk, owner="owner")
    ids = [first.pk, *PADDING, last.pk]
    for as_of in (None, datetime.now(UTC) + timedelta(days=1)):
        shown = lawful_trust(ids, as_of=as_of, include_superseded=True)
        assert first.pk not in shown and last.pk not in shown
        assert len(shown) == len(PADDING)  # the padding is unreviewed: the filter kept it


def test_node_in_domains_answers_missing_ids_alike(make_note) -> None:
    node = make_note("The first note of some domain.")
    assert node_in_domains(node.pk).pk == node.pk
    assert node_in_domains(str(node.pk), domains=["personal"]).pk == node.pk
    for bad, message in (
        ("0", "node '0' not found"),
        ("nine", "node 'nine' not found"),
        (2**63, f"node {2**63} not found"),
        (node.pk + 1000, f"node {node.pk + 1000} not found"),
    ):
        with pytest.raises(NotFound) as missing:
            node_in_domains(bad)
        assert missing.value.message == message
    with pytest.raises(NotFound) as outside:
        node_in_domains(node.pk, domains=["work"])
    assert outside.value.message == f"node {node.pk} not found"


def test_a_stored_instant_keeps_its_moment_whether_text_naive_or_in_another_zone() -> None:
    moment = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    assert _aware("2026-03-04 05:06:07") == moment
    assert _aware(datetime(2026, 3, 4, 5, 6, 7)) == moment
    east = moment.astimezone(tz(timedelta(hours=2)))
    assert _aware(east) == moment


def test_lawful_labels_each_node_with_its_trust_as_of_the_instant(make_note):
    node = make_note("Rooted after the instant.")
    then = timezone.now()
    root(node.pk, adopting_words="I hold this.", expected_body_hash=node.body_hash, owner="owner")
    now_view = Visibility.of(domains=None, scope="both", as_of=None)
    assert lawful([node.pk], now_view) == {node.pk: "ground"}
    then_view = Visibility.of(domains=None, scope="both", as_of=then)
    assert lawful([node.pk], then_view) == {node.pk: "unreviewed"}


def test_the_first_rows_by_id_are_the_oldest_unless_the_newest_are_asked_for(make_note):
    # The walk shows a hub's oldest incoming routes, a node's page its newest backlinks.
    hub = make_note("A hub.")
    for i in range(4):
        make_note(f"Derived from the hub, {i}.", origins=[{"id": hub.pk}])
    into = Edge.objects.filter(to_node=hub)
    ids = list(into.order_by("id").values_list("id", flat=True))
    assert len(ids) == 4
    assert [e.pk for e in first_by_id(into, 2)] == ids[:2]
    assert [e.pk for e in first_by_id(into, 2, newest=True)] == [ids[3], ids[2]]


def test_visible_ids_keep_to_the_callers_domains_from_the_first_id_on(make_note) -> None:
    work, home = make_note("At work.", domain="work"), make_note("At home.", domain="home")
    assert visible_ids({work.pk, home.pk}, domains=["work"]) == {work.pk}
    assert visible_ids({work.pk, home.pk}, domains=None) == {work.pk, home.pk}
    first = Node.objects.filter(pk=1).first() or _copy_at(work, 1)  # ids start at 1
    assert visible_ids({1}, domains=[first.domain]) == {1}


def test_the_first_id_names_a_node_to_look_up(make_note) -> None:
    node = make_note("A note, so that some node exists.")
    first = Node.objects.filter(pk=1).first() or _copy_at(node, 1)  # ids start at 1
    assert node_in_domains(1).pk == first.pk == 1


def test_as_of_an_instant_the_latest_lifecycle_event_decides_not_the_flag_now(make_note):
    # Restored now (flag clear), but decayed at the instant: gone then.
    node = make_note("Let go, then brought back a moment later.")
    let_go(node.pk, actor="owner")
    between = datetime.now(UTC)
    restore(node.pk, actor="owner")
    assert live_at([node.pk], as_of=between) == set()
    assert _vis(as_of=between).alive([node.pk]) == set()
    assert _vis().alive([node.pk]) == {node.pk}


def test_a_dig_sees_only_what_is_decayed_now_past_the_first_chunk_of_ids(make_note):
    live = make_note("Still live.")
    first, last = make_note("Forgotten, asked for first."), make_note("Forgotten, asked last.")
    for node in (first, last):
        let_go(node.pk, actor="owner")
    dig = Visibility.of(domains=None, scope="both", as_of=None, forgotten=True)
    ids = [first.pk, *PADDING, live.pk, last.pk]  # `live` and `last` in the second chunk
    assert dig.alive(ids) == {first.pk, last.pk}
    assert set(lawful([live.pk, first.pk, last.pk], dig)) == {first.pk, last.pk}


def test_superseded_nodes_are_labelled_where_asked_for_and_hidden_elsewhere(make_note):
    plain, old = make_note("Never reviewed."), make_note("The fuse box is in the hall.")
    sealed = make_note("Sealed away.")
    root_as_owner(old)
    supersede_as_owner(Node.objects.get(pk=old.pk), "The fuse box moved to the cellar.")
    seal(sealed.pk, owner="owner")
    ids = [plain.pk, old.pk, sealed.pk]
    for as_of in (None, datetime.now(UTC) + timedelta(days=1)):
        labelled = lawful_trust(ids, as_of=as_of, include_superseded=True)
        assert labelled == {plain.pk: "unreviewed", old.pk: "superseded"}
        assert lawful_trust(ids, as_of=as_of, include_superseded=False) == {plain.pk: "unreviewed"}
    # lawful serves walk routes and origins, which label superseded nodes.
    assert lawful(ids, _vis()) == {plain.pk: "unreviewed", old.pk: "superseded"}


def test_a_view_before_a_seal_hides_the_node_and_labels_it_sealed(make_note):
    rooted, sealed = make_note("Rooted after the instant."), make_note("Sealed after the instant.")
    before = timezone.now()
    root_as_owner(rooted)
    seal(sealed.pk, owner="owner")
    ids = [rooted.pk, sealed.pk]
    assert lawful_trust(ids, as_of=before, include_superseded=True) == {rooted.pk: "unreviewed"}
    # The owner's labels: trust as of the instant, except what is hidden now stays hidden.
    assert shown_trust(ids, as_of=None) == {rooted.pk: "ground", sealed.pk: "sealed"}
    assert shown_trust(ids, as_of=before) == {rooted.pk: "unreviewed", sealed.pk: "sealed"}


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner, without statistics")
def test_the_authority_probe_seeks_each_node_once_not_once_per_kind(make_note) -> None:
    ids = [make_note(f"Reviewed or not, {i}.").pk for i in range(3)]
    (plan,) = plans(lambda: _with_authority_events(ids), "SELECT DISTINCT node_id")
    assert "memory_event" in plan and plan.split(" | ")[0].endswith("(node_id=?)"), plan
