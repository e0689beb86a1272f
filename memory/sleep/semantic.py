"""Sleep's semantic step: fit the owner's semantic model when it is due, embed, publish.

Due when there is no model, when the stored one is refused (unreadable, inconsistent, or of
another dimension than the vectors stored under its name), or when the live nodes outnumber
those it was fitted on by REFIT_GROWTH (and by REFIT_MIN_NEW). A fit reads at most FIT_SAMPLE
bodies. The new model is staged beside the published one, every live node is embedded under
it, and only then is it renamed into place: recall never meets a model without its vectors.
Vectors of the models it retires are removed (they are derived data, rebuilt on demand).
Off unless GROVE_SEMANTIC_MODEL (docs/recall.md says why).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Max

from memory.models import Node, Vector
from memory.vectors import semantic
from memory.vectors.embed import embed_missing


def due(*, live: int) -> str:
    """Why a fit is due now ("" when it is not)."""
    if live < semantic.MIN_DOCS:
        return ""
    path = semantic.model_path()
    if not path.exists():
        return "no model yet"
    try:
        model = semantic.load(path)
        semantic.check_vectors(model)
    except semantic.ModelRefused as refused:
        return f"refused: {refused}"
    fitted_on = int(model.meta.get("fitted_on") or 0)
    if live >= fitted_on * semantic.REFIT_GROWTH and live - fitted_on >= semantic.REFIT_MIN_NEW:
        return f"grew from {fitted_on} to {live} live nodes"
    return ""


def refresh_semantic(limit: int | None, dry_run: bool, beat: Callable[..., None]) -> dict[str, Any]:
    """The sleep step (its time is in the sleep table like every step's)."""
    if not settings.GROVE_SEMANTIC_MODEL:
        return {"count": 0, "skipped": "GROVE_SEMANTIC_MODEL is off"}
    live = Node.objects.filter(decayed_at__isnull=True).count()
    reason = due(live=live)
    if not reason or dry_run:
        current = semantic.current()
        return {"count": live if reason else 0, "due": reason, "model": current and current.name}
    through = Node.objects.aggregate(top=Max("id"))["top"] or 0
    with connection.cursor() as cursor:
        # A uniform sample: enough text for a vocabulary, and the fit's time stays bounded.
        cursor.execute(
            "SELECT body FROM memory_node WHERE decayed_at IS NULL AND id <= %s "
            "ORDER BY random() LIMIT %s",
            [through, semantic.FIT_SAMPLE],
        )
        texts = [row[0] for row in cursor.fetchall()]
    model = semantic.fit(texts, fitted_on=live, through_id=through)
    staged = semantic.save(model, semantic.model_path().with_name("semantic.staged.npz"))
    beat(model=model.name, fitted=len(texts))
    made = embed_missing(batch=4096, embedder=model)
    os.replace(staged, semantic.model_path())
    semantic.forget()
    retired = Vector.objects.filter(model__startswith=semantic.PREFIX).exclude(model=model.name)
    removed, _ = retired.delete()
    return {
        "count": made,
        "model": model.name,
        "due": reason,
        "fitted_on": live,
        "docs": len(texts),
        "retired_vectors": removed,
    }
