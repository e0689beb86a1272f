"""Integrity checks on the vectors (issue 4): each has the node it names, one dimension per
model, no NaN or zero vector, and every live node its vector. memory/integrity.py assembles them
into CHECKS with the others.
"""

from __future__ import annotations

from django.db import connection

from memory.integrity_sql import changed_since as _changed
from memory.integrity_sql import rows as _rows


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
