"""Supersession chains as versions, like a pull request's history: #A superseded by #B
superseded by #C is one thing in three versions, and each step has its diff.

Computed on every view from the stored bodies, which never change (a trigger holds them), so the
history is kept for good with nothing stored for it. The diff is difflib's SequenceMatcher over
words and the spaces between them, with the changed runs grouped: an unchanged stretch of at
most GLUE_WORDS words between two changes joins them, so "Alvalade clinic" -> "Campo de Ourique
clinic" reads as one replacement rather than interleaved single words. difflib is the standard
library's and does the matching well; what it lacks is only that grouping, done here.
Every piece of text is escaped before it is marked safe. Reads the audit clock (Event.at) for
as-of views only; writes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from difflib import SequenceMatcher

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from memory.models import Event, EventKind, Node
from memory.trust import trust_map
from review.queue import NO_WORDS

_TOKENS = re.compile(r"\s+|\S+")
GLUE_WORDS = 2  # an unchanged run this short between two changes is part of one change
MAX_VERSIONS = 200  # a chain longer than this is cut (no owner corrects a fact 200 times)


@dataclass(frozen=True)
class Piece:
    """One run of the diff: `kind` "same" (old == new) or "change" (old replaced by new)."""

    kind: str
    old: str
    new: str


def pieces(old: str, new: str) -> list[Piece]:
    """`old` -> `new` as runs of unchanged and changed text, changed runs grouped."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    runs: list[Piece] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        kind = "same" if op == "equal" else "change"
        runs.append(Piece(kind, "".join(a[i1:i2]), "".join(b[j1:j2])))
    return _grouped(runs)


def _grouped(runs: list[Piece]) -> list[Piece]:
    merged: list[Piece] = []
    for n, run in enumerate(runs):
        short = run.kind == "same" and len(run.old.split()) <= GLUE_WORDS
        between = 0 < n < len(runs) - 1 and runs[n + 1].kind == "change"
        if short and between and merged and merged[-1].kind == "change":
            run = Piece("change", run.old, run.new)
        if merged and merged[-1].kind == run.kind == "change":
            last = merged.pop()
            run = Piece("change", last.old + run.old, last.new + run.new)
        merged.append(run)
    return merged


def _mark(tag: str, text: str) -> str:
    return f"<{tag}>{escape(text)}</{tag}>" if text else ""


def inline(runs: list[Piece]) -> SafeString:
    """One column: the unchanged text, each change as <del>old</del><ins>new</ins>."""
    html = "".join(
        escape(r.old) if r.kind == "same" else _mark("del", r.old) + _mark("ins", r.new)
        for r in runs
    )
    return mark_safe(html)  # each piece escaped above


def side_by_side(runs: list[Piece]) -> tuple[SafeString, SafeString]:
    """Two columns: the old words with what went struck out, the new with what came marked."""
    left = "".join(escape(r.old) if r.kind == "same" else _mark("del", r.old) for r in runs)
    right = "".join(escape(r.new) if r.kind == "same" else _mark("ins", r.new) for r in runs)
    return mark_safe(left), mark_safe(right)  # each piece escaped above


def unchanged_words(old: str, new: str) -> bool:
    """Whether `new` says the same words as `old` (only the spacing between them differs)."""
    return old.split() == new.split()


@dataclass(frozen=True)
class Step:
    """Version `number` - 1 replaced by version `number`: who, when, with what adopting words,
    and the diff (empty when either side's words are hidden: sealed or rejected)."""

    number: int
    old: Node
    new: Node
    event: Event
    shown: bool
    inline: SafeString
    left: SafeString
    right: SafeString


@dataclass(frozen=True)
class Version:
    number: int
    node: Node
    trust: str

    @property
    def shows_words(self) -> bool:
        return self.trust not in NO_WORDS


@dataclass(frozen=True)
class History:
    versions: list[Version]
    steps: list[Step]
    current: int  # 1-based number of the node the page is about

    @property
    def total(self) -> int:
        return len(self.versions)


def _superseded(
    *, node_id: int | None = None, by: int | None = None, as_of: datetime | None
) -> Event | None:
    events = Event.objects.filter(kind=EventKind.SUPERSEDED)
    events = events.filter(node_id=node_id) if node_id is not None else events
    events = events.filter(related_node_id=by) if by is not None else events
    return (events.filter(at__lte=as_of) if as_of is not None else events).first()


def history(node: Node, *, as_of: datetime | None = None) -> History | None:
    """The supersession chain `node` belongs to, oldest version first, or None when it was
    never superseded nor supersedes anything (as of `as_of`, audit clock: a past view never
    shows its future)."""
    events: list[Event] = []
    first = node.pk
    while len(events) < MAX_VERSIONS and (back := _superseded(by=first, as_of=as_of)):
        if back.node_id is None:  # a superseded event always names its node
            break
        events.insert(0, back)
        first = back.node_id
    last = node.pk
    while len(events) < MAX_VERSIONS and (ahead := _superseded(node_id=last, as_of=as_of)):
        if ahead.related_node_id is None:
            break
        events.append(ahead)
        last = ahead.related_node_id
    if not events:
        return None
    ids = [events[0].node_id, *(e.related_node_id for e in events)]
    nodes = Node.objects.defer("metadata").in_bulk([i for i in ids if i is not None])
    chain = [nodes[i] for i in ids if i is not None and i in nodes]
    trust = trust_map([v.pk for v in chain])
    versions = [Version(n, v, trust[v.pk]) for n, v in enumerate(chain, start=1)]
    steps = []
    for n, event in enumerate(events, start=2):
        old, new = versions[n - 2], versions[n - 1]
        shown = old.shows_words and new.shows_words
        runs = pieces(old.node.body, new.node.body) if shown else []
        left, right = side_by_side(runs)
        steps.append(Step(n, old.node, new.node, event, shown, inline(runs), left, right))
    current = next(v.number for v in versions if v.node.pk == node.pk)
    return History(versions, steps, current)
