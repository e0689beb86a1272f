"""Boosting, ranking's step 5 (memory.recall.rank): the pool's preview rows are read (with their
parents when the reranker wants them: memory.recall.rerank), and each node's fused score is
weighted by its recency (event clock) and by the signer boost when the query names its signer."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from memory.clocks import recency_weight
from memory.recall.lexical import query_terms


def boost(
    ordered: Sequence[int],
    read: dict[int, dict[str, Any]],
    scores: dict[int, float],
    terms: Sequence[str],
    *,
    now: datetime,
    signer: float,
    parents: bool,
) -> tuple[dict[int, dict[str, Any]], set[int]]:
    """The preview rows of `ordered` (those in `read` not read again) and the nodes whose signer
    the query names; `scores` weighted in place (recency, then 1 + `signer` for those)."""
    from memory.packets import preview_rows

    rows = {i: read[i] for i in ordered if i in read}
    rows.update(preview_rows([i for i in ordered if i not in read], parents=parents))
    term_set = set(terms)
    boosted = set()
    for node_id, row in rows.items():
        words = _signer_words(row["signature"])
        if words and words <= term_set:
            boosted.add(node_id)
        factor = 1.0 + (signer if node_id in boosted else 0.0)
        scores[node_id] *= recency_weight(_event_time(row["when"]), now=now) * factor
    return rows, boosted


@functools.lru_cache(maxsize=4096)
def _signer_words(signature: str | None) -> frozenset[str]:
    # A pool's signers are few (a conversation's speakers): their words once, not once a row.
    return frozenset(query_terms(signature or ""))


def _event_time(value: Any) -> datetime | None:
    if value is None:
        return None
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
