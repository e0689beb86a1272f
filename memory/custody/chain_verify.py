"""Verifying the hash chain (memory/chain.py): from the first event or the last checkpoint, and
against the anchor file (DESIGN.md, Custody).

Verification recomputes each event's hash in id order and names the first entry that breaks.
Someone holding the file could recompute every hash after an edit, so each verified checkpoint
is also appended to an anchor file outside the database (GROVE_CHAIN_ANCHOR; RFC 6962 publishes
its tree heads for the same reason), and integrity checks the database still carries every
anchored hash.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils import timezone

from memory.chain import GENESIS, digest_of_row, event_rows

if TYPE_CHECKING:
    from memory.models import ChainCheckpoint

# Sleep verifies incrementally from the last checkpoint; once a week it starts from the first event.
FULL_EVERY = timedelta(days=7)


@dataclass(frozen=True)
class ChainReport:
    first_id: int | None  # the first event verified (None: nothing to verify)
    through_id: int | None  # the last event that verified
    through_hash: str
    count: int
    broken: str | None  # the first break, named; None when the chain holds

    @property
    def ok(self) -> bool:
        return self.broken is None


def verify(*, after: int = 0, prev: str = GENESIS) -> ChainReport:
    """Recompute the chain from the event after id `after` (whose chain hash is `prev`) to the
    tail; stop at the first event whose stored hash differs from the recomputed one."""
    first: int | None = None
    through: int | None = after or None
    count = 0
    for row in event_rows(after):
        event_id, kind, stored = row[0], row[2], row[-1]
        first = event_id if first is None else first
        expected = digest_of_row(row, prev)
        if stored != expected:
            what = "has no chain hash" if not stored else "does not match its content and link"
            return ChainReport(
                first,
                through,
                prev,
                count,
                f"event {event_id} ({kind}) {what}: the record was edited at or before it",
            )
        prev, through, count = stored, event_id, count + 1
    return ChainReport(first, through, prev, count, None)


def full_due(*, now: datetime | None = None) -> bool:
    """True when no full verification is stored from the last FULL_EVERY (store clock)."""
    from memory.models import ChainCheckpoint

    since = (now or timezone.now()) - FULL_EVERY
    return not ChainCheckpoint.objects.filter(full=True, verified_at__gte=since).exists()


def verify_from_checkpoint(*, full: bool | None = False) -> ChainReport:
    """Verify from the last stored checkpoint (from the first event when `full`, when none is
    stored, or, with full=None, when a weekly full run is due), then store a checkpoint through
    the last event verified when the chain holds. Reads the store clock (verified_at).

    The checkpoint's own event must still carry the hash it had when checked; a mismatch there
    is a break too (a full verification names the first edited event)."""
    from django.db import transaction

    from memory.models import ChainCheckpoint, Event

    if full is None:
        full = full_due()
    mark = None if full else ChainCheckpoint.objects.order_by("-id").first()
    after, prev = 0, GENESIS
    if mark is not None:
        held = Event.objects.filter(pk=mark.event_id).values_list("chain_hash", flat=True).first()
        if held != mark.chain_hash:
            return ChainReport(
                None,
                None,
                GENESIS,
                0,
                f"event {mark.event_id} no longer carries the hash verified at "
                f"{mark.verified_at.isoformat()}: run a full verification to find the first edit",
            )
        after, prev = mark.event_id, mark.chain_hash
    report = verify(after=after, prev=prev)
    if report.ok and report.through_id is not None and (report.count or mark is None):
        with transaction.atomic():
            checkpoint = ChainCheckpoint.objects.create(
                event_id=report.through_id, chain_hash=report.through_hash, full=mark is None
            )
        _anchor(checkpoint)
    return report


def _anchor(checkpoint: ChainCheckpoint) -> None:
    """Append the checkpoint to the anchor file (after its commit; a line per checkpoint)."""
    path = Path(settings.GROVE_CHAIN_ANCHOR)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = {
        "event_id": checkpoint.event_id,
        "chain_hash": checkpoint.chain_hash,
        "verified_at": checkpoint.verified_at.isoformat(),
    }
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def anchors_disagree() -> list[str]:
    """Anchored checkpoints whose event no longer carries the anchored hash (or is gone): the
    record was rewritten after it was verified, even if its chain now verifies again."""
    path = Path(settings.GROVE_CHAIN_ANCHOR)
    if not path.is_file():
        return []
    anchored: dict[int, tuple[str, str]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            try:
                line = json.loads(text)
                anchored[int(line["event_id"])] = (line["chain_hash"], line["verified_at"])
            except (ValueError, KeyError, TypeError):
                return [f"anchor line {number} is not a checkpoint: the anchor file was edited"]
    from memory.models import Event

    held = dict(Event.objects.filter(pk__in=list(anchored)).values_list("pk", "chain_hash"))
    return [
        f"event {event_id} does not carry the hash anchored at {when}: the record was rewritten"
        for event_id, (digest, when) in sorted(anchored.items())
        if held.get(event_id) != digest
    ]


def last_checkpoint() -> ChainCheckpoint | None:
    """The latest checkpoint (for the audit page), or None. Reads, never writes."""
    from memory.models import ChainCheckpoint

    return ChainCheckpoint.objects.order_by("-id").first()
