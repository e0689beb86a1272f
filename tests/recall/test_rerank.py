"""The reranker (memory.recall.rerank): its features, the model file it reads, and the fused order
it falls back to when that file cannot be used."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from memory.recall import recall, rerank


def _model(**weights: float) -> rerank.Model:
    n = len(rerank.FEATURES)
    coefficients = np.zeros(n)
    for name, value in weights.items():
        coefficients[rerank.FEATURES.index(name)] = value
    return rerank.Model(mean=np.zeros(n), scale=np.ones(n), coefficients=coefficients)


def _write(path, **changes) -> None:
    n = len(rerank.FEATURES)
    data = {
        "features": list(rerank.FEATURES),
        "mean": [0.0] * n,
        "scale": [1.0] * n,
        "coefficients": [0.0] * n,
    }
    path.write_text(json.dumps(data | changes))


def test_the_shipped_model_fits_the_features_recall_computes() -> None:
    model = rerank.load()  # refused (ModelRefused) if FEATURES changed without a refit
    assert model.coefficients.shape == (len(rerank.FEATURES),)


def test_features_place_each_candidate_against_the_best_hits() -> None:
    signals = rerank.Signals(
        words={1: 4.0, 2: 2.0},
        vector={3: 0.4},
        via={3: (1, "responds_to"), 4: (1, "responds_to, 2 turns")},
        signer={1},
        named=True,
        bodies={1: "I painted a sunrise.", 2: "Did you paint?", 3: "x" * 300},
        parents={1: 100, 2: 100, 3: 200, 4: 100},
        mentions={
            1: "name:mel\nname:paris\nname:louvre\nname:seine\ndate:may 2023",
            2: "name:mel\nquantity:3 kids\ndate:friday\ndate:2022",
        },
        speakers=frozenset({"mel", "caro"}),
    )
    x = rerank.features([1, 2, 3, 4], {1: 2.0, 2: 1.0, 3: 0.5, 4: 0.5}, signals)
    col = {name: x[:, i].tolist() for i, name in enumerate(rerank.FEATURES)}
    assert col["score"] == [1.0, 0.5, 0.25, 0.25]
    assert col["words"] == [1.0, 0.5, 0.0, 0.0]
    assert col["vector"] == [0.0, 0.0, 0.4, 0.0]
    assert col["neighbour"] == [0.0, 0.0, 1.0, 0.0] and col["further"] == [0.0, 0.0, 0.0, 1.0]
    assert col["signer"] == [1.0, 0.0, 0.0, 0.0] and col["other_speaker"] == [0.0, 1.0, 1.0, 1.0]
    assert col["asks"] == [0.0, 1.0, 0.0, 0.0] and col["length"][2] == 1.0
    # Three of the four share parent 100; node 4 is 2 ids from node 2, the nearest of the top 3.
    assert col["session_top"] == [0.3, 0.3, 0.1, 0.3]
    assert col["near_top"] == [0.5, 0.5, 0.0, 1 / 3]
    # Names other than the pool's speakers, up to NAMES; dates and quantities up to SPECIFICS.
    assert col["names"] == [1.0, 0.0, 0.0, 0.0]
    assert col["specifics"] == [0.5, 1.0, 0.0, 0.0]


def test_a_model_reorders_the_pool(make_note) -> None:
    statement = make_note("The heron nests by the mill.")
    question = make_note("Did the heron nest by the mill?")
    with rerank.using(_model(asks=1.0)):
        first = [p["id"] for p in recall("heron mill")]
    with rerank.using(_model(asks=-1.0)):
        second = [p["id"] for p in recall("heron mill")]
    assert first[:2] == [question.pk, statement.pk]
    assert second[:2] == [statement.pk, question.pk]


N = len(rerank.FEATURES)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"features": ["score"]}, r"fitted on features \['score'\]"),
        ({"coefficients": [1.0]}, f"expected {N} numbers"),
        ({"scale": [0.0] * N}, "scale that is not positive"),
        ({"coefficients": [float("nan")] * N}, "non-finite"),
        ({"mean": [1.0, 2.0]}, f"expected {N} numbers"),
        ({"mean": "many"}, "unreadable"),
    ],
)
def test_a_model_that_does_not_fit_is_refused_with_its_reason(tmp_path, changes, reason) -> None:
    path = tmp_path / "rerank.json"
    _write(path)
    assert rerank.load(path).coefficients.shape == (N,)  # the fixture itself is usable
    _write(path, **changes)
    with pytest.raises(rerank.ModelRefused, match=reason):
        rerank.load(path)


def test_an_unreadable_file_is_refused(tmp_path) -> None:
    path = tmp_path / "rerank.json"
    path.write_text("{not json")
    with pytest.raises(rerank.ModelRefused, match="unreadable"):
        rerank.load(path)


def test_without_a_usable_model_recall_keeps_the_fused_order(
    make_note, tmp_path, monkeypatch, caplog
) -> None:
    make_note("The heron nests by the mill.")
    make_note("Did the heron nest by the mill?")
    with rerank.using(None):
        fused = [p["id"] for p in recall("heron mill")]
    for broken in ("missing", "corrupt"):
        path = tmp_path / f"{broken}.json"
        if broken == "corrupt":
            path.write_text("[1, 2")
        monkeypatch.setattr(rerank, "MODEL_PATH", path)
        rerank.forget()
        with caplog.at_level(logging.WARNING, logger="memory.recall.rerank"):
            assert [p["id"] for p in recall("heron mill")] == fused
        assert "recall keeps the fused order" in caplog.text
        caplog.clear()
    rerank.forget()


def test_the_setting_turns_the_reranker_off(make_note, settings) -> None:
    make_note("The heron nests by the mill.")
    make_note("Did the heron nest by the mill?")
    rerank.forget()
    assert rerank.current() is not None  # the shipped file is in use
    settings.GROVE_RERANK = False
    assert rerank.current() is None and not rerank.wanted()
    with rerank.using(None):
        fused = [p["id"] for p in recall("heron mill")]
    assert [p["id"] for p in recall("heron mill")] == fused


def _reference(ordered, scores, s: rerank.Signals) -> np.ndarray:
    """FEATURES one candidate at a time, written plainly (the fitted coefficients' meaning):
    the fast column-at-a-time build must give exactly these numbers."""
    best = scores[ordered[0]] or 1.0

    def share(hits, i):
        top = max(hits.values(), default=0.0)
        return hits.get(i, 0.0) / top if top > 0 else 0.0

    def first_person(body):
        text = " " + body.casefold().replace(",", " ").replace(".", " ").replace("!", " ") + " "
        return sum(text.count(w) for w in rerank._FIRST_PERSON) / text.count(" ")

    top = [s.parents[i] for i in ordered[: rerank.TOP] if i in s.parents]
    near = [i for i in ordered[: rerank.NEAR] if i in s.parents]

    def mentioned(i):
        lines = s.mentions.get(i, "").split("\n") if s.mentions.get(i) else []
        kinds = [line.split(":", 1) for line in lines]
        names = [e for k, e in kinds if k == "name" and e not in s.speakers]
        other = [e for k, e in kinds if k != "name"]
        return [min(len(names), rerank.NAMES) / rerank.NAMES,
                min(len(other), rerank.SPECIFICS) / rerank.SPECIFICS]  # fmt: skip

    def in_context(i):
        context = s.context or {}
        return context.get(i, 0.0) - max(context.get(j, 0.0) for j in ordered)

    rows = []
    for place, i in enumerate(ordered):
        how = s.via.get(i, (0, ""))[1]
        parent = s.parents.get(i)
        body = s.bodies.get(i, "")
        gaps = [abs(i - j) for j in near if j != i and s.parents[j] == parent]
        rows.append(
            [
                scores[i] / best,
                1.0 / (1 + place),
                share(s.words, i),
                share(s.unnamed, i),
                s.vector.get(i, 0.0),
                float(i in s.date),
                float(bool(how) and "turns" not in how),
                float("turns" in how),
                float(i in s.signer),
                float(s.named and i not in s.signer),
                min(len(body), 240) / 240,
                float(body.rstrip().endswith("?")),
                first_person(body),
                1.0 / (1 + max(i - parent, 0)) if parent is not None else 0.0,
                top.count(parent) / rerank.TOP if parent is not None else 0.0,
                1.0 / (1 + min(gaps)) if gaps else 0.0,
                *mentioned(i),
                *([s.meaning.get(i, 0.0), in_context(i)] if s.meaning is not None else []),
            ]
        )
    return np.array(rows, dtype=np.float64)


_WORDS = ["I", "i", "me", "my", "We'd", "we", "us", "our", "I'm", "heron", "mill,", "it.", "so!"]


def _pool(rng: np.random.Generator) -> tuple[list[int], dict[int, float], rerank.Signals]:
    n = int(rng.integers(1, 70))
    ordered = [int(i) for i in rng.choice(np.arange(1, 400), size=n, replace=False)]
    scores = dict(zip(ordered, sorted(rng.random(n) * 3, reverse=True), strict=True))
    if rng.random() < 0.1:
        scores[ordered[0]] = 0.0  # a best score of nought divides by one

    def some(p):
        return [i for i in ordered if rng.random() < p]

    def body():
        words = rng.choice(_WORDS, size=int(rng.integers(0, 90)))
        return " ".join(words) + str(rng.choice(["", "?", " ? ", "."]))

    kinds = ["responds_to", "responds_to, 2 turns", "cites", ""]
    entities = ["name:ann", "name:bo", "name:paris", "date:may", "quantity:3 kids", "name:x:y"]

    def mentions():
        return "\n".join(rng.choice(entities, size=int(rng.integers(1, 6))))

    meaning = {i: float(rng.random()) for i in some(0.9)} if rng.random() < 0.5 else None
    return (
        ordered,
        scores,
        rerank.Signals(
            words={i: float(rng.random()) for i in some(0.5)},
            unnamed={i: float(rng.random()) for i in some(0.3)},
            vector={i: float(rng.random()) for i in some(0.5)},
            date=dict.fromkeys(some(0.1), 1.0),
            via={i: (1, str(rng.choice(kinds))) for i in some(0.3)},
            signer=set(some(0.2)),
            named=bool(rng.random() < 0.5),
            bodies={i: body() for i in some(0.95)},
            parents={i: int(rng.integers(0, 450)) for i in some(0.8)},
            mentions={i: mentions() for i in some(0.4)},
            speakers=frozenset(rng.choice(["ann", "bo", "cy"], size=int(rng.integers(0, 3)))),
            meaning=meaning,
            context={i: float(rng.random()) - 0.5 for i in some(0.9)} if meaning else None,
        ),
    )


@pytest.mark.parametrize("kept", [8192, 50])
def test_the_features_equal_a_plain_candidate_at_a_time_reference_on_random_pools(
    kept, monkeypatch
) -> None:
    # 50 excerpts kept: the store fills and starts again, and some pools are larger than it.
    monkeypatch.setattr(rerank, "_BODY_ROWS", np.empty((kept, 3)))
    monkeypatch.setattr(rerank, "_body_row", {})
    rng = np.random.default_rng(7)
    for _ in range(300):
        ordered, scores, signals = _pool(rng)
        assert np.array_equal(
            rerank.features(ordered, scores, signals), _reference(ordered, scores, signals)
        )
    # The pools hold what the comparison needs: shared parents near the top, first person.
    x = rerank.features(*_pool(np.random.default_rng(3)))
    names = list(rerank.FEATURES)
    assert x[:, names.index("tells")].any() and x[:, names.index("session_top")].any()
    assert x[:, names.index("names")].any() and x[:, names.index("specifics")].any()


def test_the_rows_read_for_the_reranker_carry_each_nodes_first_parent(make_note) -> None:
    from memory.packets import preview_rows
    from memory.write import write_node

    def session(name):
        return write_node(
            body=f"Session {name}.", kind="import", jurisdiction="wild", signature="importer",
            source=f"{name}.md",
        ).node  # fmt: skip

    first, second = session("a"), session("b")
    both = [
        {"id": second.pk, "relation": "derived_from"},
        {"id": first.pk, "relation": "derived_from"},
    ]
    child = make_note("The heron nests by the mill.", origins=both)
    rows = preview_rows([child.pk, first.pk], parents=True)
    assert rows[child.pk]["parent"] == min(first.pk, second.pk)
    assert rows[first.pk]["parent"] is None  # a session derives from nothing
    assert rows[child.pk]["mentions"] is None  # sleep has not found its names yet
    assert "parent" not in preview_rows([child.pk])[child.pk]


def test_the_rows_read_for_the_reranker_carry_the_names_sleep_found(make_note) -> None:
    from memory.packets import preview_rows
    from memory.recall.entities import record_mentions

    note = make_note("We walked to the Old Mill with Ann on 7 May 2023.")
    record_mentions(after_id=0, limit=None)
    lines = set(preview_rows([note.pk], parents=True)[note.pk]["mentions"].split("\n"))
    assert {"name:old mill", "name:ann"} <= lines and any(x.startswith("date:") for x in lines)
    signals = rerank.signals(
        preview_rows([note.pk], parents=True), words=[], unnamed=[], vector=[], date=[], via={},
        signer=set(), named=False,
    )  # fmt: skip
    assert rerank._mentioned(signals.mentions[note.pk], signals.speakers)[0] == 2 / rerank.NAMES


def test_a_model_fitted_with_meaning_orders_by_what_the_candidates_mean(make_note) -> None:
    """The query shares its words with both notes; only their cosines (stored vectors of the
    current model) tell them apart, and the MEANING coefficient's sign decides."""
    from memory.models import Vector
    from memory.vectors.embed import embed_missing, get_embedder

    near = make_note("The heron nests by the mill pond at dawn.")
    far = make_note("Mill heron, said the sign on the road.")
    embed_missing()
    embedder = get_embedder()
    # Each note's vector set by hand: `near` along the query's own vector, `far` against it.
    from memory.vectors.likeness import query_vector

    q = query_vector(embedder, "heron mill")
    for node, vector in ((near, q), (far, -q)):
        Vector.objects.filter(node=node, model=embedder.name).update(data=vector.tobytes())
    n = len(rerank.FEATURES) + len(rerank.MEANING)
    coefficients = np.zeros(n)
    for sign, order in ((1.0, [near.pk, far.pk]), (-1.0, [far.pk, near.pk])):
        coefficients[-1] = sign
        model = rerank.Model(mean=np.zeros(n), scale=np.ones(n), coefficients=coefficients)
        assert model.meaning
        with rerank.using(model):
            assert [p["id"] for p in recall("heron mill")][:2] == order


def test_a_model_file_fitted_for_the_embedder_in_use_is_read_before_the_shared_one(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(rerank, "MODEL_PATH", tmp_path / "rerank.json")
    _write(tmp_path / "rerank.json")
    assert rerank.model_path("e5-small") == tmp_path / "rerank.json"
    n = len(rerank.FEATURES) + len(rerank.MEANING)
    own = tmp_path / "rerank-e5-small.json"
    own.write_text(
        json.dumps(
            {
                "features": [*rerank.FEATURES, *rerank.MEANING],
                "mean": [0.0] * n,
                "scale": [1.0] * n,
                "coefficients": [0.0] * n,
            }
        )
    )
    assert rerank.model_path("e5-small") == own
    assert rerank.load(own).meaning and not rerank.load(tmp_path / "rerank.json").meaning


def test_every_shipped_model_fits_the_features_recall_computes() -> None:
    for path in rerank.MODEL_PATH.parent.glob("rerank*.json"):
        model = rerank.load(path)  # refused (ModelRefused) if FEATURES changed without a refit
        assert model.meaning == (path != rerank.MODEL_PATH)
