"""Say why: why nothing holds a node that will decay, and what holds a live node (the pending
decays page and the node page). Reads only; the rules themselves live in memory/sleep/reach.py.
Ages are by the store clock (created_at).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from memory.models import Event, EventKind, Kind, Node
from memory.sleep import reach
from memory.trust import trust_map

SHOWN = 3  # neighbours named per row; the rest are counted


def _edges(ids: list[int]) -> list[tuple[int, int, str]]:
    """Edges touching `ids` whose both ends are live."""
    found: list[tuple[int, int, str]] = []
    for start in range(0, len(ids), 400):
        chunk = ids[start : start + 400]
        marks = ",".join(["%s"] * len(chunk))
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT e.from_node_id, e.to_node_id, e.kind FROM memory_edge e
                    JOIN memory_node a ON a.id = e.from_node_id
                    JOIN memory_node b ON b.id = e.to_node_id
                    WHERE (e.from_node_id IN ({marks}) OR e.to_node_id IN ({marks}))
                    AND a.decayed_at IS NULL AND b.decayed_at IS NULL ORDER BY e.id""",
                [*chunk, *chunk],
            )
            found += cursor.fetchall()
    return found


def _phrase(node_id: int, edge: tuple[int, int, str], now_garbage: set[int], only: bool) -> str:
    src, dst, kind = edge
    other = dst if src == node_id else src
    if kind not in reach.HOLDING:
        lead = "its only live neighbour" if only else "live neighbour"
        return f"{lead} #{other} is linked by {kind}, which does not hold"
    if src == node_id:
        return f"it holds #{other} ({kind}); that does not hold it back"
    if other in now_garbage:
        return f"#{other} holds it ({kind}), but nothing holds #{other}"
    return f"#{other} holds it ({kind}) only while #{other} is young or held by young nodes"


def why_rows(ids: list[int], *, now_garbage: Iterable[int]) -> dict[int, list[str]]:
    """For each node in `ids`, phrases naming its live neighbours and why none of them holds it
    (at most SHOWN named, the rest counted), or "no live neighbour". A holder in `now_garbage`
    is itself unheld; any other holder holds only while it is young or held by young nodes."""
    wanted = set(ids)
    gone = {int(i) for i in now_garbage}
    by_node: dict[int, list[tuple[int, int, str]]] = {i: [] for i in ids}
    for edge in _edges(ids):
        for end in {edge[0], edge[1]} & wanted:
            by_node[end].append(edge)
    out: dict[int, list[str]] = {}
    for node_id, edges in by_node.items():
        if not edges:
            out[node_id] = ["no live neighbour"]
            continue
        phrases = [_phrase(node_id, e, gone, len(edges) == 1) for e in edges[:SHOWN]]
        if len(edges) > SHOWN:
            phrases.append(f"and {len(edges) - SHOWN} more live neighbours, none holding it")
        out[node_id] = phrases
    return out


def root_reasons(ids: Iterable[int]) -> dict[int, list[str]]:
    """Why each live node in `ids` holds itself (an empty list: it is not a root). Store clock."""
    age = settings.GROVE_DECAY_MIN_AGE_DAYS
    now = timezone.now()
    nodes = Node.objects.filter(pk__in=list(ids), decayed_at__isnull=True).in_bulk()
    trusts = trust_map(list(nodes))
    owned: dict[int, str] = {}
    events = Event.objects.filter(node_id__in=list(nodes)).filter(
        Q(kind=EventKind.KEPT) | Q(kind=EventKind.RESTORED, reason=reach.OWNER_RESTORE)
    )
    for node_id, kind in events.values_list("node_id", "kind"):
        owned[node_id] = "kept by the owner" if kind == EventKind.KEPT else "restored by the owner"
    questions = {i for i, n in nodes.items() if n.kind == Kind.QUESTION}
    open_q = set(reach.open_question_ids().tolist()) if questions else set()
    out: dict[int, list[str]] = {}
    for node_id, node in nodes.items():
        why = []
        if node.permanent:
            why.append("permanent")
        if trusts.get(node_id) in reach.PROTECTED_TRUST:
            why.append(str(trusts[node_id]))
        if node.access_count:
            reads, days = node.access_count, node.read_days
            by = f", last by {node.last_read_by}" if node.last_read_by else ""
            why.append(
                f"read {reads} time{'s' * (reads != 1)} on {days} day{'s' * (days != 1)}{by}"
            )
        if node_id in owned:
            why.append(owned[node_id])
        if node.created_at > now - timedelta(days=age):
            why.append(f"young ({(now - node.created_at).days} of {age} days)")
        if node_id in open_q:
            why.append("an open question")
        out[node_id] = why
    return out


def held_by(node_id: int, *, cap: int = 2000) -> dict:
    """What holds a live node: {"roots": why it holds itself} when it is a root, else the
    shortest chain of holders up to a root, {"chain": [(holder id, edge kind), ...], "roots":
    the last holder's reasons}; {"chain": [], "roots": []} when nothing does (it will decay).
    Walks holding edges backwards, one query per level, at most `cap` nodes."""
    own = root_reasons([node_id]).get(node_id, [])
    if own:
        return {"chain": [], "roots": own}
    came: dict[int, tuple[int, str]] = {}
    frontier, seen = [node_id], {node_id}
    while frontier and len(seen) < cap:
        marks = ",".join(["%s"] * len(frontier))
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT e.from_node_id, e.to_node_id, e.kind FROM memory_edge e
                    JOIN memory_node n ON n.id = e.from_node_id
                    WHERE e.to_node_id IN ({marks}) AND e.kind IN ({reach.HOLDING_SQL})
                    AND n.decayed_at IS NULL ORDER BY e.id""",
                frontier,
            )
            level = []
            for src, dst, kind in cursor.fetchall():
                if src not in seen:
                    seen.add(src)
                    came[src] = (dst, kind)
                    level.append(src)
        reasons = root_reasons(level)
        for holder in level:
            if reasons.get(holder):
                chain, at = [], holder
                while at != node_id:
                    chain.append((at, came[at][1]))
                    at = came[at][0]
                return {"chain": chain[::-1], "roots": reasons[holder]}
        frontier = level
    return {"chain": [], "roots": []}
