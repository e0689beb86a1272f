"""Sleep's integrity step, incremental so that a large store's nightly check stays short: each
sleep checks what changed since the last verified point, and everything once a week.

The verified point is a set of marks, the highest node, vector, edge and event ids present when
a sleep's checks last came back clean (SleepRun.steps["integrity"]["verified"]). The next sleep
runs the row-by-row checks (integrity.SCOPED) only over rows above those marks, the hash chain
from its checkpoint (memory/chain.py), and the checks about state that changes in place (decay,
permanence, trust, vectors owed) over everything, as they are indexed or small. A run with
violations records no verified point, so the next one looks again from the last clean one.

Everything is checked from the start when the chain's weekly full verification is due (the one
clock for both, chain_verify.full_due: no full checkpoint in the last seven days), when no clean
run recorded marks yet, and on demand (`manage.py integrity` always runs in full). What the weekly
run alone can see: an old row edited in place behind the triggers, a row whose id is below a
mark but committed after it was taken (PostgreSQL sequences), FTS5's whole-index comparison.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Max

from memory.custody.chain_verify import full_due
from memory.custody.integrity import CheckResult, run_checks
from memory.models import Edge, Event, Node, SleepRun, Vector

STEP = "integrity"


def current_marks() -> dict[str, int]:
    """The highest id of each table the scoped checks read (0 for an empty table)."""
    tables = (("node", Node), ("vector", Vector), ("edge", Edge), ("event", Event))
    return {name: model.objects.aggregate(top=Max("id"))["top"] or 0 for name, model in tables}


def last_verified() -> dict[str, int] | None:
    """The marks of the latest non-dry sleep whose integrity step came back clean, or None."""
    runs = SleepRun.objects.filter(dry_run=False).order_by("-id").values_list("steps", flat=True)
    for steps in runs.iterator():
        verified = ((steps or {}).get(STEP) or {}).get("verified")
        if verified:
            return {name: int(value) for name, value in verified.items()}
    return None


def sleep_checks(*, full: bool = False) -> tuple[list[CheckResult], dict[str, Any]]:
    """Run the checks as sleep does: from the last verified point; everything when `full`, when
    the weekly run is due, or when nothing was verified yet (then the chain still starts at its
    checkpoint unless its own weekly run is due). Returns the results and what the step
    records: whether the rows were read in full, the marks it started above (since) and, when
    every check held, the marks now verified."""
    since = last_verified()
    weekly = full or full_due()
    rows_full = weekly or since is None
    marks = current_marks()  # before checking: rows arriving meanwhile wait for the next run
    results = run_checks(full_chain=weekly, since=None if rows_full else since)
    info: dict[str, Any] = {
        "full": rows_full,
        "chain_full": weekly,
        "since": None if rows_full else since,
    }
    if all(r.ok for r in results):
        info["verified"] = marks
    return results, info
