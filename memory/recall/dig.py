"""Dig: an explicit, logged look into what was forgotten (DESIGN.md, "Forgotten is not lost").

A dig is recall over the decayed nodes only (memory.recall with forgotten=True: the same ranking,
the same visibility but for liveness, turned over in memory.visibility), answered as packets
labelled with when each node decayed and why, in words (memory.reasons). Ordinary recall stays
live-only and says how many forgotten nodes also matched (forgotten_matches), so a caller knows
when a dig is worth a call.

Digging is not reading: a dig brings nothing back. An agent that reads a node it dug up brings it
back (revive_dug: a revived event with reason dug_and_read, and what the node holds with it, as
restore does); a token may read a decayed node only within DUG_WINDOW of a dig of its own that
answered it, so a decayed id stays NotFound to everyone else. The owner's dig on the dashboard
is inspection: it revives nothing until the owner presses Restore (memory.forgetting.restore).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from memory import audit, reach
from memory.chunks import chunks
from memory.models import Event, EventKind, Node, RecallLog
from memory.reasons import reason_words
from memory.recall import recall
from memory.recall.lexical import fts_candidates, query_terms, trigram_candidates
from memory.visibility import Visibility, lawful

DUG_AND_READ = "dug_and_read"
HELD_BY_DUG = "held_by_dug"
# How long a dig lets its token read what it answered: the agent's next steps, not a standing
# grant (a later dig renews it).
DUG_WINDOW = timedelta(days=1)
# forgotten_matches counts at most this many: enough to say "worth a dig", without scoring the
# whole forgotten index on every recall.
MATCH_CAP = 1000


def dig(
    query: str,
    *,
    scope: str = "home",
    domains: Iterable[str] | None = None,
    limit: int = 10,
    actor: str = "owner",
    why: bool = False,
) -> list[dict[str, Any]]:
    """Ranked previews of the decayed nodes the caller may see about `query`, each labelled
    decayed (True), decayed_at, decay_reason (the code) and decayed_why (its words); logs a
    RecallLog row with dig set. Brings nothing back. Refuses what recall refuses."""
    results = recall(
        query, scope=scope, domains=domains, limit=limit, actor=actor, why=why, forgotten=True
    )
    labels = decay_labels([p["id"] for p in results])
    for p in results:
        p.update(labels.get(p["id"], {}))
    return results


def decay_labels(node_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """For each decayed node: decayed (True), decayed_at (ISO), decay_reason (the code of its
    latest decayed event, "" when none was recorded) and decayed_why (the reason in words)."""
    ids = list(dict.fromkeys(node_ids))
    out: dict[int, dict[str, Any]] = {}
    for chunk in chunks(ids):
        reasons: dict[int, str] = dict(
            Event.objects.filter(node_id__in=chunk, kind=EventKind.DECAYED)
            .order_by("id")
            .values_list("node_id", "reason")
        )
        for node_id, decayed_at in Node.objects.filter(
            pk__in=chunk, decayed_at__isnull=False
        ).values_list("id", "decayed_at"):
            code = reasons.get(node_id, "")
            out[node_id] = {
                "decayed": True,
                "decayed_at": decayed_at.isoformat() if decayed_at else None,
                "decay_reason": code,
                "decayed_why": reason_words(code) or "decayed",
            }
    return out


def forgotten_matches(
    query: str, *, scope: str = "home", domains: Iterable[str] | None = None
) -> int:
    """How many decayed nodes the caller may see match `query`'s words (at most MATCH_CAP):
    under the same visibility as a dig, so sealed, rejected and out-of-scope nodes never count.
    Not logged (the recall it accompanies is). Refuses (Invalid) an unknown scope."""
    vis = Visibility.of(domains=domains, scope=scope, as_of=None, forgotten=True)
    terms = query_terms(query if isinstance(query, str) else "")
    if not terms:
        return 0
    ids = {i for i, _ in fts_candidates(terms, vis, MATCH_CAP)}
    ids |= {i for i, _ in trigram_candidates(query, vis, MATCH_CAP)}
    return min(len(lawful(ids, vis)), MATCH_CAP)


def dug_recently(actor: str, node_id: int) -> bool:
    """Whether `actor` dug up `node_id` (a dig of its own answered it) within DUG_WINDOW, by the
    store clock."""
    since = timezone.now() - DUG_WINDOW
    logs = RecallLog.objects.filter(dig=True, actor=actor, at__gte=since)
    return any(node_id in (ids or ()) for ids in logs.values_list("result_ids", flat=True))


def revive_dug(node_id: int, *, actor: str) -> list[int]:
    """Bring back a decayed node an agent dug up and now reads: revived, reason dug_and_read,
    and every decayed node it holds (restored, reason held_by_dug, related to it), in one
    transaction with their events. Returns the ids brought back with it; [] and nothing written
    when the node is live (someone brought it back first)."""
    with transaction.atomic():
        if not Node.objects.filter(pk=node_id, decayed_at__isnull=False).update(decayed_at=None):
            return []
        audit.record(EventKind.REVIVED, node=node_id, actor=actor, reason=DUG_AND_READ)
        return reach.restore_held(node_id, actor=actor, reason=HELD_BY_DUG)
