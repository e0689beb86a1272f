"""Custody checks (issue 12): what is stored agrees with its hashes, its arrival, its scroll and
the audit log's hash chain. memory/integrity.py assembles them into CHECKS with the others.

Raw SQL on purpose, as in integrity.py: they must see what is in the file, not what the ORM says.
"""

from __future__ import annotations

import hashlib
import json

from memory.integrity_sql import rows as _rows


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def body_hash_mismatch(*, after: int = 0) -> list[str]:
    """sha256(body) = body_hash for every node (with an id above `after`), read in batches
    (bodies never sit all at once)."""
    found: list[str] = []
    last = after
    while rows := _rows(
        "SELECT id, body, body_hash FROM memory_node WHERE id > %s ORDER BY id LIMIT 2000", (last,)
    ):
        last = rows[-1][0]
        found += [
            f"node {node_id}: sha256 of the body is not its body_hash"
            for node_id, body, stored in rows
            if _sha(body) != stored
        ]
    return found


def verdicts_disagree_with_body() -> list[str]:
    """Rooted and superseded events name the hash of the body as it is now."""
    rows = _rows(
        """SELECT e.id, e.kind, e.node_id, e.detail, n.body
           FROM memory_event e JOIN memory_node n ON n.id = e.node_id
           WHERE e.kind IN ('rooted', 'superseded') ORDER BY e.id"""
    )
    found = []
    for event_id, kind, node_id, detail, body in rows:
        detail = json.loads(detail) if isinstance(detail, str) else detail
        if (detail or {}).get("body_hash") != _sha(body):
            found.append(
                f"{kind} event {event_id} adopted a hash that node {node_id}'s body no longer has"
            )
    return found


_ARRIVAL_FIELDS = ("body_hash", "kind", "jurisdiction", "domain", "signature", "source")


def nodes_disagree_with_arrival(*, after: int = 0) -> list[str]:
    """Every node (with an id above `after`) has its arrival event (its link in the hash chain),
    and the arrival's snapshot still describes the row: an edit made with the triggers dropped
    shows here."""
    found: list[str] = []
    last = after
    cols = ", ".join(f"n.{f}" for f in _ARRIVAL_FIELDS)
    while rows := _rows(
        f"""SELECT n.id, {cols}, (SELECT e.snapshot FROM memory_event e WHERE e.node_id = n.id
            AND e.kind = 'arrived' ORDER BY e.id LIMIT 1)
            FROM memory_node n WHERE n.id > %s ORDER BY n.id LIMIT 2000""",
        (last,),
    ):
        last = rows[-1][0]
        for node_id, *values, snap in rows:
            if snap is None:
                found.append(f"node {node_id} has no arrival event: it joined no chain")
                continue
            snap = json.loads(snap) if isinstance(snap, str) else snap
            differ = [f for f, v in zip(_ARRIVAL_FIELDS, values, strict=True) if snap.get(f) != v]
            if differ:
                found.append(f"node {node_id}: {', '.join(differ)} differ from its arrival")
    return found


def scrolls_disagree_with_pairs(*, after: int = 0) -> list[str]:
    """Every scroll a pair points into (a pair with an id above `after`) re-hashes, runs 1, 2,
    3 ... and holds its pairs' records."""
    from memory.scroll import verify_scroll_file

    found: list[str] = []
    for (name,) in _rows(
        "SELECT DISTINCT scroll_path FROM memory_node WHERE kind = 'pair' AND id > %s "
        "ORDER BY scroll_path",
        (after,),
    ):
        report = verify_scroll_file(name)
        found += [f"scroll {name}: {problem}" for problem in report["problems"]]
    return found


def hash_chain(*, full: bool | None = False) -> list[str]:
    """The audit log's hash chain, from the last checkpoint (or the start); names the first
    entry that breaks (memory/chain.py)."""
    from memory.chain_verify import verify_from_checkpoint

    report = verify_from_checkpoint(full=full)
    return [] if report.ok else [report.broken or "the chain is broken"]


def chain_anchors() -> list[str]:
    """Every checkpoint anchored outside the database is still carried by its event."""
    from memory.chain_verify import anchors_disagree

    return anchors_disagree()
