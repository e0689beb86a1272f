from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

import memory.recall as recall_module
from memory.clocks import recency_weight
from memory.errors import Invalid
from memory.models import Edge, Node, RecallLog, Vector
from memory.recall import MAX_LIMIT, recall
from memory.vectors.embed import embed_missing
from tests._helpers.events import mark
from tests._helpers.nodes import store


def fts_has(node: Node) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memory_node WHERE body_tsv @@ plainto_tsquery('english', "
            "'heron') AND id = %s"
            if connection.vendor == "postgresql"
            else "SELECT count(*) FROM memory_node_fts "
            "WHERE memory_node_fts MATCH 'heron' AND rowid = %s",
            [node.pk],
        )
        return cursor.fetchone()[0] == 1


def ids(packets) -> list[int]:
    return [p["id"] for p in packets]


def test_it_returns_previews_led_by_jurisdiction_and_never_a_body(make_note):
    note = make_note("The heron nests by the old mill pond.")
    packets = recall("heron nests")
    assert ids(packets) == [note.pk]
    assert "body" not in packets[0]
    assert list(packets[0])[:7] == [
        "jurisdiction",
        "id",
        "trust",
        "kind",
        "excerpt",
        "source",
        "score",
    ]


def test_excerpts_are_bounded(make_note):
    make_note("heron " + "word " * 400)
    assert len(recall("heron")[0]["excerpt"]) <= 240


def test_default_scope_is_home(make_note, root_note):
    home = make_note("The heron came back at dawn.")
    wild = make_note("A heron article from the web.", kind="hearsay", jurisdiction="wild")
    assert ids(recall("heron")) == [home.pk]
    assert set(ids(recall("heron", scope="both"))) == {home.pk, wild.pk}
    assert ids(recall("heron", scope="wild")) == [wild.pk]


def test_recall_does_not_count_as_access(make_note):
    note = make_note("The heron is grey.")
    assert recall("heron")
    note.refresh_from_db()
    assert note.access_count == 0 and note.last_accessed_at is None


def test_a_decayed_node_is_absent_though_its_vector_and_fts_rows_remain(make_note):
    note = make_note("The heron fished all morning.")
    embed_missing()
    assert ids(recall("heron fished")) == [note.pk]
    mark(note, "decayed")
    assert Vector.objects.filter(node=note).exists() and fts_has(note)
    assert recall("heron fished") == []


def test_expansion_does_not_step_through_a_decayed_node(make_note, root_note):
    hit = make_note("The heron stood in the reeds.")
    reply = make_note(
        "Quiet weekend overall.",
        origins=[{"id": hit.pk, "relation": "responds_to"}],
    )
    embed_missing()
    assert reply.pk in ids(recall("heron reeds"))  # reached through the edge only
    mark(hit, "decayed")
    assert Edge.objects.filter(from_node=reply, to_node=hit).exists()
    assert recall("heron reeds") == []


@pytest.mark.parametrize("kind", ["sealed", "rejected"])
def test_a_sealed_or_rejected_node_is_absent_and_bridges_nothing(make_note, kind):
    hidden = make_note("The heron secret.")
    reply = make_note("Quiet weekend.", origins=[{"id": hidden.pk, "relation": "responds_to"}])
    embed_missing()
    assert set(ids(recall("heron secret"))) == {hidden.pk, reply.pk}
    mark(hidden, kind)
    assert fts_has(hidden)
    assert recall("heron secret") == []


def test_superseded_only_when_asked_and_labelled(make_note):
    old = make_note("The heron count was twelve.")
    mark(old, "superseded")
    assert recall("heron count") == []
    packets = recall("heron count", include_superseded=True)
    assert ids(packets) == [old.pk] and packets[0]["trust"] == "superseded"


def test_as_of_before_a_decay_shows_the_node_and_after_it_does_not(make_note):
    note = make_note("The heron left in autumn.", days_old=10)
    decayed_at = timezone.now() - timedelta(days=5)
    mark(note, "decayed", at=decayed_at)
    assert recall("heron autumn") == []
    assert ids(recall("heron autumn", as_of=decayed_at - timedelta(days=1))) == [note.pk]
    assert recall("heron autumn", as_of=decayed_at + timedelta(days=1)) == []


def test_as_of_before_creation_does_not_show_the_node(make_note):
    make_note("The heron arrived.", days_old=1)
    assert recall("heron", as_of=timezone.now() - timedelta(days=2)) == []


def test_a_node_outside_the_callers_domains_is_invisible(make_note):
    work = make_note("The heron project deadline.", domain="work")
    assert ids(recall("heron project")) == [work.pk]  # domains=None: every domain
    assert ids(recall("heron project", domains=["work"])) == [work.pk]
    assert recall("heron project", domains=["personal"]) == []
    assert recall("heron project", domains=[]) == []


def test_a_query_of_only_punctuation_returns_nothing(make_note):
    make_note("The heron.")
    assert recall('?!"*()-:^{}') == []


def test_fts_operators_in_a_query_are_just_words(make_note):
    note = make_note("The heron AND the egret.")
    assert ids(recall('heron AND "egret" NOT* NEAR(x) col:y')) == [note.pk]


def test_unicode_queries_work(make_note):
    note = make_note("Café au lait by the Zürich lake.")
    assert ids(recall("zurich CAFÉ")) == [note.pk]


def test_every_recall_writes_a_log_row(make_note):
    note = make_note("The heron.")
    recall("heron", actor="agent-7")
    recall("?!")
    logs = list(RecallLog.objects.order_by("id"))
    assert [(log.actor, log.result_ids) for log in logs] == [("agent-7", [note.pk]), ("owner", [])]


def test_it_refuses_an_unknown_scope_and_a_bad_limit(db):
    with pytest.raises(Invalid, match="unknown scope"):
        recall("heron", scope="everything")
    with pytest.raises(Invalid, match="limit"):
        recall("heron", limit=0)


def test_older_events_rank_lower_all_else_equal(make_note):
    old = make_note("Heron sighting.", referent_time="2015-01-01T00:00:00Z")
    new = make_note("Heron sighting!", referent_time=timezone.now())
    packets = recall("heron sighting")
    assert ids(packets) == [new.pk, old.pk]


def test_recency_weight_is_within_bounds_and_unknown_time_is_neutral():
    now = datetime(2025, 1, 1, tzinfo=UTC)
    for days in (0, 1, 30, 365, 3650, 100_000):
        assert 0.5 <= recency_weight(now - timedelta(days=days), now=now) <= 1.0
    assert recency_weight("not a time", now=now) == 1.0
    assert recency_weight(None, now=now) == 1.0


def test_vectors_of_another_model_or_dimension_are_never_mixed(make_note):
    from memory.vectors.embed import get_embedder, to_blob
    from memory.vectors.matrix import vector_matrix

    note = make_note("The heron.")
    embed_missing()
    Vector.objects.create(node=note, model="other-model", dim=3, data=to_blob([1.0, 0.0, 0.0]))
    matrix = vector_matrix()
    assert Vector.objects.count() == matrix.n + 1  # every vector but the other model's
    assert matrix.vectors.shape[1] == get_embedder().dim
    assert ids(recall("heron")) == [note.pk]


def test_recall_names_the_bad_scope_and_the_bad_as_of_in_its_refusals(db) -> None:
    with pytest.raises(Invalid) as scope:
        recall("boiler", scope="everywhere")
    assert scope.value.code == "bad_scope"
    with pytest.raises(Invalid) as when:
        recall("boiler", as_of="last tuesday")
    assert when.value.code == "bad_datetime" and when.value.message.startswith("as_of ")


def test_recall_as_of_reports_trust_as_it_stood_then(make_note) -> None:
    from tests._helpers.acts import root_as_owner, supersede_as_owner

    node = make_note("The heron nests by the weir.")
    root_as_owner(node)
    while_ground = timezone.now().isoformat()
    supersede_as_owner(node, "The heron nests by the mill.")
    assert node.pk not in [p["id"] for p in recall("heron weir")]
    then = {p["id"]: p["trust"] for p in recall("heron weir", as_of=while_ground)}
    assert then[node.pk] == "ground"


def test_a_query_that_is_not_text_recalls_nothing_and_is_logged_empty(db) -> None:
    assert recall(None) == [] and recall(42) == []  # type: ignore[arg-type]
    assert list(RecallLog.objects.values_list("query", flat=True)) == ["", ""]


def test_recall_scores_keep_their_fraction(make_note) -> None:
    make_note("Heron, heron by the pond.")
    make_note("A heron once, among many other birds seen at the lake that day.")
    scores = [p["score"] for p in recall("heron")]
    assert len(scores) == 2 and 0 < scores[1] < scores[0]
    assert scores[1] != round(scores[1]) and scores[1] == round(scores[1], 6)


def test_recall_takes_a_limit_from_1_to_max_and_refuses_others_as_bad_limit(lone):
    lone("Heron at the pond.")
    assert len(recall("heron", scope="wild", limit=1)) == 1
    assert len(recall("heron", scope="wild", limit=MAX_LIMIT)) == 1
    for limit in (0, MAX_LIMIT + 1, True):  # a bool is not a count
        with pytest.raises(Invalid) as refused:
            recall("heron", limit=limit)
        assert refused.value.code == "bad_limit"
    assert RecallLog.objects.count() == 2  # a refusal logs nothing


def test_recall_returns_ten_by_default(db):
    store(*[f"Heron sighting number {'again ' * i}." for i in range(12)])
    assert len(recall("heron", scope="wild")) == 10


def test_the_recall_log_holds_the_asked_query_domains_as_of_actor_and_time_taken(db, monkeypatch):
    ticks = [2.0]
    monkeypatch.setattr(
        recall_module.time, "perf_counter", lambda: ticks.pop(0) if ticks else 2.0123456
    )
    asked = "heron " * 500
    recall(asked, domains=["work"], as_of="2025-03-04T05:06:07+00:00", actor="")
    log = RecallLog.objects.get()
    assert log.query == asked[:2000]
    assert log.domains == ["work"]
    assert log.as_of == datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
    assert log.actor == "owner"
    assert log.took_ms == 12.346  # (2.0123456 - 2.0) * 1000 to three places
    recall("heron", actor="agent:scout")
    last = RecallLog.objects.latest("pk")
    assert (last.domains, last.as_of, last.actor) == (["*"], None, "agent:scout")
