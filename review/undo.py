"""Undo a bulk act as a batch: the owner's declines are proposed again (a ceremony) and the
nodes let go come back (memory/batches.py), both in one undo batch of its own, on the record.
Each decline's undo is its own transaction, as each decline was (review/bulk_views.py)."""

from __future__ import annotations

from datetime import datetime

from memory import batches
from memory.models import EventKind
from review import ceremony


def undo_batch(batch: str, *, owner: str, now: datetime | None = None) -> batches.Outcome:
    """Undo `batch` (store clock). Refuses as memory.batches.undoable does. Nodes let go come
    back first, then the declines are proposed again; a node decided on since is skipped."""
    events = batches.undoable(batch, now=now)
    again = batches.new_batch()
    if events[0].kind == EventKind.RESTORED:  # a restore of many: they go again
        return batches.undo_restore(events, actor=owner, batch=again, undoes=batch)
    out = batches.undo_let_go(events, actor=owner, batch=again, undoes=batch)
    detail = batches.tag(again, batches.undo_words(events), undoes=batch)
    for event in events:
        if event.kind != EventKind.DECLINED or event.node_id is None:
            continue
        if ceremony.undo_decline(event, owner=owner, batch=detail) is None:
            out.skipped[event.node_id] = "decided on since"
        elif event.node_id not in out.done:
            out.done.append(event.node_id)
    return out
