"""Integrity checks: each returns the violations it finds; an empty list means the check holds.
The graph's own checks (flags against events, edges, the word index, nests, reachability), the
custody checks (what is stored agrees with its hashes, its arrival, its scroll and the audit
log's hash chain) and the vector checks; CHECKS at the end assembles them all.

They read raw SQL on purpose: they must see what is in the file, whatever the ORM believes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import DatabaseError, connection

MAX_EXAMPLES = 20


def _rows(sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows


def _changed(n: str, marks: dict[str, int] | None) -> tuple[str, tuple[int, ...]]:
    """Above marks: an SQL condition keeping the nodes `n` that are new or have a new event (the
    flags below change only with an event; one changed behind the triggers waits for the
    weekly full run). Without marks: no condition."""
    if not marks:
        return "", ()
    return (
        f"""AND {n}.id IN (SELECT node_id FROM memory_event WHERE id > %s
                           UNION SELECT id FROM memory_node WHERE id > %s)""",
        (marks["event"], marks["node"]),
    )


@dataclass
class CheckResult:
    name: str
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def permanent_but_decayed(*, marks: dict[str, int] | None = None) -> list[str]:
    where, params = _changed("n", marks)
    return [
        f"node {node_id} is permanent but decayed"
        for (node_id,) in _rows(
            f"""SELECT id FROM memory_node n WHERE permanent = TRUE AND decayed_at IS NOT NULL
                {where}""",
            params,
        )
    ]


def decayed_without_event() -> list[str]:
    return [
        f"node {node_id} is decayed but has no decayed event"
        for (node_id,) in _rows(
            """SELECT n.id FROM memory_node n WHERE n.decayed_at IS NOT NULL AND NOT EXISTS
               (SELECT 1 FROM memory_event e WHERE e.node_id = n.id AND e.kind = 'decayed')"""
        )
    ]


def lifecycle_flag_disagrees_with_latest_event(*, marks: dict[str, int] | None = None) -> list[str]:
    """The decayed flag must match the latest lifecycle event (decayed vs restored/revived)."""
    where, params = _changed("x", marks)
    rows = _rows(
        f"""
        WITH latest AS (
            SELECT node_id, MAX(id) AS id FROM memory_event x
            WHERE kind IN ('decayed', 'restored', 'revived') {where.replace("x.id", "x.node_id")}
            GROUP BY node_id
        )
        SELECT n.id, e.kind, n.decayed_at IS NOT NULL
        FROM latest l JOIN memory_event e ON e.id = l.id JOIN memory_node n ON n.id = l.node_id
        WHERE (e.kind = 'decayed') != (n.decayed_at IS NOT NULL)
        """,
        params,
    )
    return [
        f"node {node_id} is {'decayed' if decayed else 'live'} but its latest lifecycle event "
        f"is {kind}"
        for node_id, kind, decayed in rows
    ]


def permanent_without_event(*, marks: dict[str, int] | None = None) -> list[str]:
    where, params = _changed("n", marks)
    return [
        f"node {node_id} is permanent but has no promoted_permanent event"
        for (node_id,) in _rows(
            f"""SELECT n.id FROM memory_node n WHERE n.permanent = TRUE {where} AND NOT EXISTS
               (SELECT 1 FROM memory_event e WHERE e.node_id = n.id
                AND e.kind = 'promoted_permanent')""",
            params,
        )
    ]


def edges_touching_missing_nodes(*, after: int = 0) -> list[str]:
    return [
        f"edge {edge_id} ({src} -> {dst}) touches a missing node"
        for edge_id, src, dst in _rows(
            """SELECT e.id, e.from_node_id, e.to_node_id FROM memory_edge e WHERE e.id > %s
               AND (NOT EXISTS (SELECT 1 FROM memory_node n WHERE n.id = e.from_node_id)
                 OR NOT EXISTS (SELECT 1 FROM memory_node n WHERE n.id = e.to_node_id))""",
            (after,),
        )
    ]


def fts_out_of_sync(*, after: int = 0) -> list[str]:
    """Every node has exactly its row in the full-text index, and the index matches the bodies.
    With `after`, only rows above that node id, and without FTS5's whole-index comparison."""
    if connection.vendor == "postgresql":
        return _tsvector_out_of_sync(after=after)
    found = [
        f"node {node_id} has no full-text row"
        for (node_id,) in _rows(
            """SELECT id FROM memory_node WHERE id > %s AND id NOT IN
               (SELECT id FROM memory_node_fts_docsize WHERE id > %s)""",
            (after, after),
        )
    ]
    found += [
        f"full-text row {row_id} has no node"
        for (row_id,) in _rows(
            """SELECT id FROM memory_node_fts_docsize WHERE id > %s AND id NOT IN
               (SELECT id FROM memory_node WHERE id > %s)""",
            (after, after),
        )
    ]
    if after:
        return found
    try:
        # FTS5's own check compares the index with the content table, token by token.
        _rows("INSERT INTO memory_node_fts(memory_node_fts, rank) VALUES ('integrity-check', 1)")
    except DatabaseError as exc:
        found.append(f"full-text index disagrees with node bodies: {exc}")
    return found


def _tsvector_out_of_sync(*, after: int = 0) -> list[str]:
    """PostgreSQL's word index is a generated column of the row itself (migration 0013), so it
    cannot drift from the body; what can go wrong is the column or its index missing."""
    found = [
        f"node {node_id} has no tsvector"
        for (node_id,) in _rows(
            "SELECT id FROM memory_node WHERE id > %s AND body_tsv IS NULL", (after,)
        )
    ]
    if not _rows("SELECT 1 FROM pg_indexes WHERE indexname = 'memory_node_body_tsv'"):
        found.append("the full-text index memory_node_body_tsv is missing")
    return found


def run_checks(
    names: list[str] | None = None,
    *,
    full_chain: bool | None = False,
    since: dict[str, int] | None = None,
) -> list[CheckResult]:
    """Run the named checks (all by default); each result lists up to MAX_EXAMPLES violations
    plus a count line when there are more. The hash chain is verified from its last checkpoint,
    from the start when `full_chain`, or when a weekly full run is due with full_chain=None.
    With `since` (marks: the highest node, vector and edge ids already verified), the checks
    in SCOPED look only at rows above their mark (memory/custody/since.py)."""
    results = []
    for name, check in CHECKS.items():
        if names and name not in names:
            continue
        if check is hash_chain:
            violations = hash_chain(full=full_chain)
        elif since and SCOPED.get(name) == "marks":
            violations = check(marks=since)  # type: ignore[call-arg]
        elif since and name in SCOPED:
            violations = check(after=since.get(SCOPED[name], 0))  # type: ignore[call-arg]
        else:
            violations = check()
        if len(violations) > MAX_EXAMPLES:
            extra = len(violations) - MAX_EXAMPLES
            violations = [*violations[:MAX_EXAMPLES], f"... and {extra} more"]
        results.append(CheckResult(name, violations))
    return results


# --- reachability, and the edges and nests sleep and extract make -----------------------------


def ground_or_proposed_decayed(*, marks: dict[str, int] | None = None) -> list[str]:
    from memory.models import CEREMONY_EVENT_KINDS
    from memory.trust import trust_map

    kinds = ",".join(f"'{k.value}'" for k in CEREMONY_EVENT_KINDS)
    where, params = _changed("n", marks)
    ids = [
        node_id
        for (node_id,) in _rows(
            f"""SELECT n.id FROM memory_node n WHERE n.decayed_at IS NOT NULL {where} AND EXISTS
                (SELECT 1 FROM memory_event e WHERE e.node_id = n.id AND e.kind IN ({kinds}))""",
            params,
        )
    ]
    return [
        f"node {node_id} is {trust} but decayed"
        for node_id, trust in trust_map(ids).items()
        if trust in ("ground", "proposed")
    ]


def similar_edges_duplicated(*, after: int = 0) -> list[str]:
    """A pair is similar once: a->b and b->a both similar is a duplicate (the later of the two
    with an id above `after`)."""
    return [
        f"similar edges {a_id} ({a} -> {b}) and {b_id} ({b} -> {a}) duplicate one pair"
        for a_id, a, b, b_id in _rows(
            """SELECT x.id, x.from_node_id, x.to_node_id, y.id FROM memory_edge y
               JOIN memory_edge x ON x.from_node_id = y.to_node_id
                AND x.to_node_id = y.from_node_id AND x.kind = 'similar'
               WHERE y.kind = 'similar' AND y.id > %s AND x.id < y.id""",
            (after,),
        )
    ]


def nests_not_verbatim(*, after: int = 0) -> list[str]:
    """Every nests edge (container -> part; with an id above `after`) has a part whose body is
    the container's body at the span the part records (metadata.extract), word for word."""
    found = []
    for edge_id, outer_id, inner_id, outer, inner, meta in _rows(
        """SELECT e.id, e.from_node_id, e.to_node_id, p.body, c.body, c.metadata
           FROM memory_edge e JOIN memory_node p ON p.id = e.from_node_id
           JOIN memory_node c ON c.id = e.to_node_id WHERE e.kind = 'nests' AND e.id > %s""",
        (after,),
    ):
        span = (meta if isinstance(meta, dict) else json.loads(meta or "{}")).get("extract") or {}
        start, end = span.get("start"), span.get("end")
        verbatim = (
            span.get("parent") == outer_id
            and isinstance(start, int)
            and isinstance(end, int)
            and outer[start:end] == inner
        )
        if not verbatim:
            found.append(f"nests edge {edge_id}: node {inner_id} is not verbatim in {outer_id}")
    return found


# Decay is reachability (memory/reach.py): the sweep never leaves a live holder of a
# decayed node, and never takes a root. The owner's let go and consolidation are decisions.
_LAST_DECAY = """(SELECT ev.reason FROM memory_event ev WHERE ev.node_id = {n}.id
    AND ev.kind = 'decayed' ORDER BY ev.id DESC LIMIT 1)"""


# Above marks, only edges that are new or touch a node with a new event (a decay, a restore, a
# revival, an arrival): an old edge between unchanged nodes held or not as it did when verified.
_EDGES_SINCE = """AND e.id IN (SELECT id FROM memory_edge WHERE id > %s
    UNION SELECT x.id FROM memory_edge x JOIN memory_event t ON t.node_id = x.to_node_id
          WHERE t.id > %s
    UNION SELECT x.id FROM memory_edge x JOIN memory_event t ON t.node_id = x.from_node_id
          WHERE t.id > %s)"""


def live_node_holds_decayed_node(*, marks: dict[str, int] | None = None) -> list[str]:
    from memory.reach import HOLDING_SQL

    since = (marks["edge"], marks["event"], marks["event"]) if marks else ()
    rows = _rows(
        f"""SELECT e.from_node_id, e.kind, e.to_node_id FROM memory_edge e
            JOIN memory_node a ON a.id = e.from_node_id AND a.decayed_at IS NULL
            JOIN memory_node b ON b.id = e.to_node_id AND b.decayed_at IS NOT NULL
            WHERE e.kind IN ({HOLDING_SQL}) {_EDGES_SINCE if marks else ""}
            AND COALESCE({_LAST_DECAY.format(n="b")}, '') NOT IN ('owner_let_go', 'consolidated')
            ORDER BY e.id LIMIT {MAX_EXAMPLES}""",
        since,
    )
    return [f"live node {a} holds decayed node {b} ({kind})" for a, kind, b in rows]


def root_decayed(*, marks: dict[str, int] | None = None) -> list[str]:
    """A node the sweep decayed (unreachable) that was a root then: read, kept or restored by
    the owner before, young by the threshold its decay recorded (store clock), or
    ground/proposed/sealed now. A decay recorded before the sweep wrote its threshold
    (min_age_days) is not judged young: the threshold it ran under is unknown, and today's
    setting may be another. Above marks, only nodes with an event above the event mark (their
    decay, or a ceremony since)."""
    from datetime import timedelta

    from memory.reach import OWNER_RESTORE, PROTECTED_TRUST
    from memory.trust import trust_map

    rows = _rows(
        f"""SELECT b.id, b.access_count, b.created_at, b.decayed_at, EXISTS (SELECT 1
                FROM memory_event o WHERE o.node_id = b.id AND o.at <= b.decayed_at
                AND (o.kind = 'kept' OR (o.kind = 'restored' AND o.reason = %s))),
                EXISTS (SELECT 1 FROM memory_event c WHERE c.node_id = b.id
                AND c.kind IN ('proposed', 'rooted', 'sealed')),
                {_LAST_DECAY.replace("ev.reason", "ev.detail").format(n="b")}
            FROM memory_node b WHERE b.decayed_at IS NOT NULL
            {"AND b.id IN (SELECT node_id FROM memory_event WHERE id > %s)" if marks else ""}
            AND {_LAST_DECAY.format(n="b")} = 'unreachable'""",
        (OWNER_RESTORE, marks["event"]) if marks else (OWNER_RESTORE,),
    )

    def young(made: datetime | str, gone: datetime | str, detail: Any) -> bool:
        days = (_json(detail) or {}).get("min_age_days")
        if not isinstance(days, int | float):
            return False
        return _as_instant(gone) - _as_instant(made) < timedelta(days=days)  # type: ignore[operator]

    bad = {i: "read" for i, reads, *_ in rows if reads}
    bad |= {i: "owned" for i, _, _, _, owned, *_ in rows if owned}
    bad |= {i: "young" for i, _, made, gone, _, _, detail in rows if young(made, gone, detail)}
    trusts = trust_map([i for i, *_, acts, _ in rows if acts])
    bad |= {i: str(t) for i, t in trusts.items() if t in PROTECTED_TRUST}
    return [f"root node {i} ({why}) was decayed as unreachable" for i, why in sorted(bad.items())]


# --- custody: hashes, arrivals, scrolls, the chain ------------------------------------------


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
# The clocks the arrival's snapshot holds, compared as instants (the engines spell them apart).
_ARRIVAL_CLOCKS = ("created_at", "referent_time")


def _as_instant(value: datetime | str | None) -> datetime | None:
    if value is None:
        return None
    value = datetime.fromisoformat(value) if isinstance(value, str) else value
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _arrival_differs(row: tuple[Any, ...]) -> list[str]:
    """The stored fields of one node (a row of nodes_disagree_with_arrival's SELECT) that its
    arrival does not describe: the snapshot's columns and clocks, the detail's content key and
    metadata hash (arrivals written before the hash was recorded carry none: not compared), and
    the token the arrival came through."""
    from memory.audit import metadata_hash

    _, *values, created, referent, key, token_id, metadata, snap, detail, arrival_token = row
    snap, detail = _json(snap), _json(detail) or {}
    differ = [f for f, v in zip(_ARRIVAL_FIELDS, values, strict=True) if snap.get(f) != v]
    for name, value in zip(_ARRIVAL_CLOCKS, (created, referent), strict=True):
        if _as_instant(snap.get(name)) != _as_instant(value):
            differ.append(name)
    if detail.get("content_key") != key:
        differ.append("content_key")
    if token_id != arrival_token:
        differ.append("token_id")
    recorded = detail.get("metadata_hash")
    if recorded is not None and recorded != metadata_hash(_json(metadata)):
        differ.append("metadata")
    return differ


def nodes_disagree_with_arrival(*, after: int = 0) -> list[str]:
    """Every node (with an id above `after`) has its arrival event (its link in the hash chain),
    and the arrival still describes every stored field of the row (its words, kind, axes,
    signature, source, clocks, content key, token and metadata): an edit made with the triggers
    dropped shows here, each field by name."""
    found: list[str] = []
    last = after
    cols = ", ".join(f"n.{f}" for f in (*_ARRIVAL_FIELDS, *_ARRIVAL_CLOCKS))
    while rows := _rows(
        f"""SELECT n.id, {cols}, n.content_key, n.token_id, n.metadata,
            a.snapshot, a.detail, a.token_id
            FROM memory_node n LEFT JOIN memory_event a ON a.id = (SELECT MIN(e.id)
                FROM memory_event e WHERE e.node_id = n.id AND e.kind = 'arrived')
            WHERE n.id > %s ORDER BY n.id LIMIT 2000""",
        (last,),
    ):
        last = rows[-1][0]
        for row in rows:
            if row[-3] is None:
                found.append(f"node {row[0]} has no arrival event: it joined no chain")
            elif differ := _arrival_differs(row):
                found.append(f"node {row[0]}: {', '.join(differ)} differ from its arrival")
    return found


# What a grant records of a token, compared field by field (tokens.grant_detail spells it).
_GRANT_FIELDS = (
    "name",
    "prefix",
    "domains",
    "read_only",
    "revoked_at",
    "token_hash",
    "muted",
    "auto_decline",
    "write_limit",
)


def tokens_disagree_with_grant() -> list[str]:
    """Every token has its grant on the chain (a token_granted event, then token_revoked), and
    its row still says what the latest one granted: its name, prefix, domains, read-only flag,
    revocation and (by a digest) its hash. A token given another domain, made writable or
    un-revoked behind the functions of memory/tokens.py shows here, each field by name. Tokens
    are few: every one is read, and every grant event."""
    from memory.models import ApiToken
    from memory.tokens import GRANT_DEFAULTS, grant_detail

    latest: dict[int, dict[str, Any]] = {}
    for (detail,) in _rows(
        """SELECT detail FROM memory_event WHERE kind IN ('token_granted', 'token_revoked')
           ORDER BY id"""
    ):
        detail = _json(detail) or {}
        if isinstance(detail.get("token"), int):
            latest[detail["token"]] = detail
    found = []
    columns = [f.attname for f in ApiToken._meta.concrete_fields]
    for row in _rows(f"SELECT {', '.join(columns)} FROM memory_apitoken ORDER BY id"):
        values = dict(zip(columns, row, strict=True))
        values["domains"] = _json(values["domains"])
        for clock in ("created_at", "last_used_at", "revoked_at"):
            values[clock] = _as_instant(values[clock])
        token = ApiToken(**values)
        grant = latest.get(token.pk)
        if grant is None:
            found.append(f"token {token.pk} has no grant event: it is on no chain")
            continue
        now = grant_detail(token)
        now["token_hash"] = now.pop("token_hash_sha256")
        # A grant older than the owner's governance fields granted their defaults.
        grant = {**GRANT_DEFAULTS, **grant, "token_hash": grant.get("token_hash_sha256")}
        differ = [
            f
            for f in _GRANT_FIELDS
            if (
                _as_instant(now[f]) != _as_instant(grant.get(f))
                if f == "revoked_at"
                else now[f] != grant.get(f)
            )
        ]
        if differ:
            found.append(f"token {token.pk}: {', '.join(differ)} differ from its grant")
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
    from memory.custody.chain_verify import verify_from_checkpoint

    report = verify_from_checkpoint(full=full)
    return [] if report.ok else [report.broken or "the chain is broken"]


def chain_anchors() -> list[str]:
    """Every checkpoint anchored outside the database is still carried by its event."""
    from memory.custody.chain_verify import anchors_disagree

    return anchors_disagree()


# --- vectors ----------------------------------------------------------------------------------


def vectors_of_wrong_dimension(*, after: int = 0) -> list[str]:
    """A blob that is not dim float32s, or a dim unlike the model's other rows (its modal dim);
    rows with an id above `after`."""
    found = [
        f"vector {vec_id} (node {node_id}, {model}) has {length} bytes for dim {dim}"
        for vec_id, node_id, model, dim, length in _rows(
            """SELECT id, node_id, model, dim, length(data) FROM memory_vector
               WHERE id > %s AND length(data) != dim * 4""",
            (after,),
        )
    ]
    # Above a mark, a model's verified rows are represented by its last one at or below the
    # mark (it had the modal dim then): no count over every vector. On SQLite, unary + and
    # CROSS JOIN keep each read on the id range: through the (model, node) index instead, the
    # last row at or below the mark sorted every vector of the model (2 s at 1M).
    pg = connection.vendor == "postgresql"
    plus, cross = ("", "") if pg else ("+", "CROSS ")
    counts = (
        """counts AS (SELECT model, dim, count(*) AS c FROM memory_vector GROUP BY model, dim)"""
        if not after
        else f"""recent AS (SELECT {plus}model AS model, dim, count(*) AS c FROM memory_vector
                            WHERE id > %s GROUP BY {plus}model, dim),
                ref AS (SELECT r.model, (SELECT o.dim FROM memory_vector o
                        WHERE {plus}o.model = r.model AND o.id <= %s
                        ORDER BY o.id DESC LIMIT 1) AS dim
                        FROM (SELECT DISTINCT model FROM recent) r),
                counts AS (SELECT model, dim, c FROM recent UNION ALL
                           SELECT model, dim, 1000000000000 FROM ref WHERE dim IS NOT NULL)"""
    )
    found += [
        f"vector {vec_id} (node {node_id}, {model}) has dim {dim}; the model's rows have {modal}"
        for vec_id, node_id, model, dim, modal in _rows(
            f"""WITH {counts},
                    modal AS (SELECT model, dim FROM counts c1 WHERE NOT EXISTS
                              (SELECT 1 FROM counts c2 WHERE c2.model = c1.model
                               AND (c2.c > c1.c OR (c2.c = c1.c AND c2.dim < c1.dim))))
               SELECT v.id, v.node_id, v.model, v.dim, m.dim FROM memory_vector v
               {cross}JOIN modal m ON m.model = v.model WHERE v.id > %s AND v.dim != m.dim""",
            (after, after, after) if after else (after,),
        )
    ]
    return found


def vectors_nan_or_zero(*, after: int = 0) -> list[str]:
    """Vectors (with an id above `after`) holding NaN or infinity, or of zero norm (nothing can
    be near them). Read in chunks of 5,000 rows so 100k vectors never sit in memory at once."""
    import numpy as np

    found: list[str] = []
    last = after
    while True:
        rows = _rows(
            """SELECT id, node_id, dim, data FROM memory_vector WHERE id > %s
               AND length(data) = dim * 4 ORDER BY id LIMIT 5000""",
            (last,),
        )
        if not rows:
            return found
        last = rows[-1][0]
        for dim in {r[2] for r in rows}:
            same = [r for r in rows if r[2] == dim]
            flat = np.frombuffer(b"".join(bytes(r[3]) for r in same), dtype="<f4")
            matrix = flat.reshape(len(same), dim)
            finite = np.isfinite(matrix).all(axis=1)
            norms = np.linalg.norm(np.where(np.isfinite(matrix), matrix, 0), axis=1)
            for k in np.nonzero(~finite | (norms == 0))[0]:
                vec_id, node_id = same[k][0], same[k][1]
                what = "NaN or infinite values" if not finite[k] else "zero norm"
                found.append(f"vector {vec_id} (node {node_id}) has {what}")


def vectors_of_missing_nodes(*, after: int = 0) -> list[str]:
    return [
        f"vector {vec_id} belongs to missing node {node_id}"
        for vec_id, node_id in _rows(
            """SELECT v.id, v.node_id FROM memory_vector v WHERE v.id > %s
               AND NOT EXISTS (SELECT 1 FROM memory_node n WHERE n.id = v.node_id)""",
            (after,),
        )
    ]


def live_nodes_without_vectors(*, marks: dict[str, int] | None = None) -> list[str]:
    """Live nodes a finished sleep should have embedded but did not.

    Only nodes the last done (non-dry) run covered are checked: its embed step records the
    highest node id it saw (steps.embed.through_id), its model, and whether nothing was left
    (complete). A node with a higher id arrived later; a node revived or restored after that run
    started was decayed when it ran. Both wait for the next run.
    """
    import json

    where, params = _changed("n", marks)
    runs = _rows(
        """SELECT started_at, steps FROM memory_sleeprun WHERE status = 'done' AND dry_run = FALSE
           ORDER BY id DESC"""
    )
    for started_at, steps in runs:
        embed = (json.loads(steps) if isinstance(steps, str) else steps or {}).get("embed", {})
        if not embed.get("complete") or not embed.get("through_id"):
            continue
        return [
            f"node {node_id} is live without a {embed['model']} vector after sleep run"
            for (node_id,) in _rows(
                f"""SELECT n.id FROM memory_node n WHERE n.decayed_at IS NULL AND n.id <= %s
                   {where} AND NOT EXISTS (SELECT 1 FROM memory_vector v
                                   WHERE v.node_id = n.id AND v.model = %s)
                   AND NOT EXISTS (SELECT 1 FROM memory_event e WHERE e.node_id = n.id
                                   AND e.kind IN ('restored', 'revived') AND e.at >= %s)""",
                (embed["through_id"], *params, embed["model"], started_at),
            )
        ]
    return []


CHECKS: dict[str, Callable[[], list[str]]] = {
    "permanent_but_decayed": permanent_but_decayed,
    "decayed_without_event": decayed_without_event,
    "lifecycle_flag_disagrees_with_latest_event": lifecycle_flag_disagrees_with_latest_event,
    "permanent_without_event": permanent_without_event,
    "edges_touching_missing_nodes": edges_touching_missing_nodes,
    "fts_out_of_sync": fts_out_of_sync,
    "vectors_of_wrong_dimension": vectors_of_wrong_dimension,
    "vectors_nan_or_zero": vectors_nan_or_zero,
    "vectors_of_missing_nodes": vectors_of_missing_nodes,
    "live_nodes_without_vectors": live_nodes_without_vectors,
    "ground_or_proposed_decayed": ground_or_proposed_decayed,
    "similar_edges_duplicated": similar_edges_duplicated,
    "body_hash_mismatch": body_hash_mismatch,
    "verdicts_disagree_with_body": verdicts_disagree_with_body,
    "nodes_disagree_with_arrival": nodes_disagree_with_arrival,
    "scrolls_disagree_with_pairs": scrolls_disagree_with_pairs,
    "tokens_disagree_with_grant": tokens_disagree_with_grant,
    "hash_chain": hash_chain,
    "chain_anchors": chain_anchors,
    "nests_not_verbatim": nests_not_verbatim,
    "live_node_holds_decayed_node": live_node_holds_decayed_node,
    "root_decayed": root_decayed,
}

# Checks that read rows one by one, and the id mark each can start above (integrity_since.py).
SCOPED: dict[str, str] = {
    "edges_touching_missing_nodes": "edge",
    "fts_out_of_sync": "node",
    "vectors_of_wrong_dimension": "vector",
    "vectors_nan_or_zero": "vector",
    "vectors_of_missing_nodes": "vector",
    "similar_edges_duplicated": "edge",
    "body_hash_mismatch": "node",
    "nodes_disagree_with_arrival": "node",
    "scrolls_disagree_with_pairs": "node",
    "nests_not_verbatim": "edge",
    "live_node_holds_decayed_node": "marks",
    "root_decayed": "marks",
    "permanent_but_decayed": "marks",
    "lifecycle_flag_disagrees_with_latest_event": "marks",
    "permanent_without_event": "marks",
    "ground_or_proposed_decayed": "marks",
    "live_nodes_without_vectors": "marks",
}
