"""Near-duplicates for the owner's triage: which waiting proposal says what another waiting one,
or a node rooted lately, already says ("like #3004, which you rooted a minute ago").

Two signals, the content key first (the same words up to case, width and spacing: certain),
then the cosine of the current embedder's vectors (stored ones where sleep made them, the rest
embedded here in memory and never stored: looking at the queue changes nothing). Candidates are
the waiting proposals and the nodes rooted in the last NEAR_ROOTED_DAYS, same domain only, and
only while they are proposed or ground: a sealed or rejected node is never named.
Reads the store clock of events (Event.at) for "lately"; writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.utils import timezone

from memory.chunks import chunks
from memory.models import Event, EventKind, Node, Trust, Vector
from memory.trust import trust_map
from memory.vectors.embed import cosine_floor, from_blob, get_embedder

NEAR_ROOTED_DAYS = 30  # how far back a rooted node still counts as "lately"
NEAR_ROOTED_MAX = 500  # at most this many lately rooted nodes are compared


@dataclass(frozen=True)
class Near:
    """The node `of` is like: its id, its trust (proposed or ground), when it was rooted (ground
    only), the cosine (1.0 for the same words) and whether the words are the same."""

    node_id: int
    trust: str
    rooted_at: datetime | None
    score: float
    same_words: bool


def _lately_rooted() -> dict[int, datetime]:
    since = timezone.now() - timedelta(days=NEAR_ROOTED_DAYS)
    rows = (
        Event.objects.filter(kind=EventKind.ROOTED, at__gte=since)
        .order_by("-at", "-id")
        .values_list("node_id", "at")[:NEAR_ROOTED_MAX]
    )
    found: dict[int, datetime] = {}
    for node_id, at in rows:
        if node_id is not None:
            found.setdefault(node_id, at)
    return found


def near_duplicates(shown: list[int], *, waiting_ids: list[int]) -> dict[int, Near]:
    """For each node of `shown` (queue rows), the closest other node it is like, if any is at or
    above the embedder's near_duplicate cosine (embed.cosine_floor): a rooted one before a
    waiting one, then the closest."""
    if not shown:
        return {}
    rooted = _lately_rooted()
    waiting = set(waiting_ids)  # proposed: waiting() judged them in this request
    pool = waiting | set(rooted) | set(shown)
    trust = dict.fromkeys(waiting, Trust.PROPOSED.value) | trust_map(pool - waiting)
    allowed = {Trust.PROPOSED.value, Trust.GROUND.value}
    # A node rooted lately and superseded since is no longer what the owner holds true.
    candidates = [i for i in pool if trust[i] in allowed]
    # No bodies: only the few without a stored vector need theirs (_vectors loads them).
    # Only the shown nodes' domains: a node is never like one in another domain.
    domains = set(Node.objects.filter(pk__in=shown).values_list("domain", flat=True))
    nodes: dict[int, Node] = {}
    for chunk in chunks(candidates):
        rows = Node.objects.filter(pk__in=chunk, domain__in=domains)
        nodes.update((n.pk, n) for n in rows.only("id", "domain", "content_key"))
    ids = sorted(nodes)
    if not ids:
        return {}
    vectors = _vectors(ids)
    row = {node_id: n for n, node_id in enumerate(ids)}
    threshold = cosine_floor("near_duplicate")
    by_key: dict[tuple[str, str], list[int]] = {}
    for node_id in ids:
        by_key.setdefault((nodes[node_id].domain, nodes[node_id].content_key), []).append(node_id)
    found: dict[int, Near] = {}
    for me in shown:
        if me not in row:
            continue
        mine = nodes[me]
        scores = vectors @ vectors[row[me]]
        close = {ids[n] for n in np.flatnonzero(scores >= threshold).tolist()}
        twins = set(by_key[(mine.domain, mine.content_key)])
        best: Near | None = None
        for other in (close | twins) - {me}:
            if nodes[other].domain != mine.domain:
                continue
            same = other in twins
            near = Near(
                other,
                trust[other],
                rooted.get(other),
                1.0 if same else float(scores[row[other]]),
                same,
            )
            if best is None or _rank(near) > _rank(best):
                best = near
        if best is not None:
            found[me] = best
    return found


def _rank(near: Near) -> tuple[bool, bool, float, int]:
    # The same words first, then a rooted node (what the owner already decided), then the
    # closest, then the older id (the first of a pair stays the one named).
    return (near.same_words, near.trust == Trust.GROUND, near.score, -near.node_id)


def _vectors(ids: list[int]) -> np.ndarray:
    """Unit rows in `ids` order: stored where the current model has one, else embedded now."""
    embedder = get_embedder()
    stored: dict[int, np.ndarray] = {}
    for chunk in chunks(ids):
        rows = Vector.objects.filter(node_id__in=chunk, model=embedder.name, dim=embedder.dim)
        for node_id, data in rows.values_list("node_id", "data"):
            stored[node_id] = from_blob(data, embedder.dim)
    missing = [i for i in ids if i not in stored]
    if missing:
        bodies: dict[int, str] = {}
        for chunk in chunks(missing):
            bodies.update(Node.objects.filter(pk__in=chunk).values_list("id", "body"))
        stored.update(zip(missing, embedder.embed([bodies[i] for i in missing]), strict=True))
    matrix = np.stack([stored[i] for i in ids]).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.where(norms == 0, 1, norms), dtype=np.float32)
