"""Dig: an explicit, logged look into what was forgotten (DESIGN.md, "Forgotten is not lost").

A dig is recall over the decayed nodes only (memory.recall with forgotten=True: the same ranking,
the same visibility but for liveness, turned over in memory.visibility), answered as packets
labelled with when each node decayed and why, in words (memory.audit). Ordinary recall stays
live-only and says how many forgotten nodes also matched (forgotten_matches), so a caller knows
when a dig is worth a call, and how many live ones the scopes it did not search hold
(other_scopes), so an empty home answer is never taken for an empty memory.

Digging is not reading: a dig brings nothing back. An agent that reads a node it dug up brings it
back (revive_dug: a revived event with reason dug_and_read, and what the node holds with it, as
restore does); a token may read a decayed node only within DUG_WINDOW of a dig of its own that
answered it, so a decayed id stays NotFound to everyone else. The owner's dig on the dashboard
is inspection: it revives nothing until the owner presses Restore (memory.forgetting.restore).

The owner's /forgotten/ page looks things up through forgotten_nodes: words (the same forgotten
visibility, so sealed and rejected words never match), the reason it decayed, domain, kind,
author, where it came from and when it was let go. forgotten_ids gives the ids a filter selects,
for acts on all of them at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from memory import audit, reach
from memory.audit import reason_words
from memory.chunks import chunks
from memory.errors import Invalid
from memory.models import ApiToken, Event, EventKind, Node, RecallLog
from memory.recall import recall
from memory.recall.lexical import (
    fts_matching,
    query_terms,
    trigram_candidates,
)
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
    token: ApiToken | None = None,
) -> list[dict[str, Any]]:
    """Ranked previews of the decayed nodes the caller may see about `query`, each labelled
    decayed (True), decayed_at, decay_reason (the code) and decayed_why (its words); logs a
    RecallLog row with dig set. Brings nothing back. Refuses what recall refuses."""
    results = recall(
        query,
        scope=scope,
        domains=domains,
        limit=limit,
        actor=actor,
        why=why,
        forgotten=True,
        token=token,
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
    return _matching(query, vis)


# The scopes a recall did not look at: both looks everywhere.
OTHER_SCOPES = {"home": ("wild",), "wild": ("home",), "both": ()}


def other_scopes(
    query: str, *, scope: str = "home", domains: Iterable[str] | None = None, as_of: Any = None
) -> dict[str, int]:
    """For each scope the recall did not look at, how many live nodes the caller may see there
    match `query`'s words (at most MATCH_CAP each), so an agent that searched home and found
    nothing learns that its imported conversations (wild) hold 40 matches. The same visibility
    as recall (domains, as_of; sealed and rejected never count). Refuses (Invalid) an unknown
    scope."""
    Visibility.of(domains=domains, scope=scope, as_of=as_of)  # refuses an unknown scope
    return {
        other: _matching(query, Visibility.of(domains=domains, scope=other, as_of=as_of))
        for other in OTHER_SCOPES[scope]
    }


def _matching(query: str, vis: Visibility) -> int:
    """How many nodes under `vis` match the query's words or substrings, at most MATCH_CAP."""
    terms = query_terms(query if isinstance(query, str) else "")
    if not terms:
        return 0
    # Counted, not ranked: scoring the matches (bm25 weighed by per-term visible counts) was
    # 40% of every agent's recall at 100k, for a number.
    ids = set(fts_matching(terms, vis, MATCH_CAP))
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


FILTERS = ("q", "reason", "domain", "kind", "author", "origin", "since", "until")


@dataclass(frozen=True)
class ForgottenFilter:
    """What the owner looks for among the decayed nodes. words: matched as recall matches
    (at most MATCH_CAP best matches); reason: the code of the node's latest decay; author: its
    signature or the name of the token that wrote it; origin: the start of its source (an
    import's file, a conversation "conv-26", a session "conv-26#D3"); since and until: the
    days it was let go, both included (UTC)."""

    words: str = ""
    reason: str = ""
    domain: str = ""
    kind: str = ""
    author: str = ""
    origin: str = ""
    since: date | None = None
    until: date | None = None

    @classmethod
    def of(cls, params: Mapping[str, str]) -> ForgottenFilter:
        """The filter a query string names (FILTERS). Refuses (Invalid) a day that is not
        YYYY-MM-DD."""
        text = {name: (params.get(name) or "").strip() for name in FILTERS}
        return cls(
            words=text["q"],
            reason=text["reason"],
            domain=text["domain"],
            kind=text["kind"],
            author=text["author"],
            origin=text["origin"],
            since=_day(text["since"], "since"),
            until=_day(text["until"], "until"),
        )

    def described(self) -> str:
        """The filter in words: a confirmation's heading and a batch's record."""
        parts = [f"saying “{self.words}”"] if self.words else []
        for value, words in (
            (reason_words(self.reason) if self.reason else "", "forgotten because {}"),
            (self.domain, "in domain {}"),
            (self.kind, "of kind {}"),
            (self.author, "written by {}"),
            (self.origin, "from {}"),
            (self.since.isoformat() if self.since else "", "let go from {}"),
            (self.until.isoformat() if self.until else "", "let go until {}"),
        ):
            if value:
                parts.append(words.format(value))
        return "every forgotten node" + (" " + ", ".join(parts) if parts else "")

    def values(self) -> dict[str, str]:
        """The filter as the query string names it (empty ones included)."""
        return {
            "q": self.words,
            "reason": self.reason,
            "domain": self.domain,
            "kind": self.kind,
            "author": self.author,
            "origin": self.origin,
            "since": self.since.isoformat() if self.since else "",
            "until": self.until.isoformat() if self.until else "",
        }


def _day(text: str, name: str) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise Invalid(f"{name} must be a day, YYYY-MM-DD", code="bad_field") from None


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def forgotten_nodes(chosen: ForgottenFilter) -> QuerySet[Node]:
    """The decayed nodes `chosen` selects, unordered (the owner sees every domain and both
    jurisdictions; words never match sealed or rejected nodes)."""
    qs = Node.objects.filter(decayed_at__isnull=False)
    if chosen.words:
        vis = Visibility.of(domains=None, scope="both", as_of=None, forgotten=True)
        terms = query_terms(chosen.words)
        # A list in forgetting order, not by relevance: the matches, unranked (no bm25).
        hits = set(fts_matching(terms, vis, MATCH_CAP)) if terms else set()
        hits |= {i for i, _ in trigram_candidates(chosen.words, vis, MATCH_CAP)}
        qs = qs.filter(pk__in=sorted(lawful(hits, vis)))
    if chosen.domain:
        qs = qs.filter(domain=chosen.domain)
    if chosen.kind:
        qs = qs.filter(kind=chosen.kind)
    if chosen.author:
        qs = qs.filter(
            Q(signature=chosen.author) | Q(token__name=chosen.author.removeprefix("agent:"))
        )
    if chosen.origin:
        qs = qs.filter(source__startswith=chosen.origin)
    if chosen.since:
        qs = qs.filter(decayed_at__gte=_midnight(chosen.since))
    if chosen.until:
        qs = qs.filter(decayed_at__lt=_midnight(chosen.until + timedelta(days=1)))
    if chosen.reason:
        latest = Event.objects.filter(node_id=OuterRef("pk"), kind=EventKind.DECAYED)
        qs = qs.alias(decay_reason=Subquery(latest.order_by("-id").values("reason")[:1])).filter(
            decay_reason=chosen.reason
        )
    return qs


def forgotten_ids(chosen: ForgottenFilter) -> list[int]:
    """The ids `chosen` selects, most recently forgotten first: what an act on every match
    (restore all matching) acts on."""
    return list(forgotten_nodes(chosen).order_by("-decayed_at", "-id").values_list("id", flat=True))
