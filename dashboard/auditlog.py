"""The audit log as the owner browses and exports it: filters, rows and sealed-excerpt hiding.

The log outlives the nodes it describes and is never pruned; these functions only read it.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from memory import batches, inputs
from memory.clocks import EARLIEST, LATEST
from memory.errors import Invalid
from memory.models import ApiToken, Event, EventKind, Trust
from memory.trust import trust_map

FILTERS = ("kind", "reason", "actor", "domain", "node", "since", "until", "batch")
EXPORT_FIELDS = (
    "id",
    "at",
    "kind",
    "node_id",
    "actor",
    "reason",
    "related_node_id",
    "domain",
    "excerpt",
    "access_count",
    "created_at",
    "referent_time",
    "last_accessed_at",
    "token",
    "batch",
    "query",
    "results",
)
# The actors that are not agents (each agent is agent:<its token's name>): the actor list's
# fixed part, beside one entry per token.
OTHER_ACTORS = (
    "owner",
    "sleep",
    "importer:markdown",
    "importer:transcript",
    "importer:locomo",
    "migration",
)
AGENT_PREFIX = "agent:"


def actor_choices() -> list[str]:
    """The audit log's actor list: every token's actor (revoked ones too: the log outlives
    them), then the others. Read from the token table, not the log: a distinct over every
    event would read the whole log on each page."""
    names = ApiToken.objects.order_by("name").values_list("name", flat=True)
    return [*(AGENT_PREFIX + n for n in names), *OTHER_ACTORS]


def day_presets(today: date) -> list[tuple[str, str, str]]:
    """(label, since, until) for the log's date presets, UTC days."""
    day = timedelta(days=1)
    return [
        ("today", today.isoformat(), today.isoformat()),
        ("yesterday", (today - day).isoformat(), (today - day).isoformat()),
        ("7 days", (today - 6 * day).isoformat(), today.isoformat()),
    ]


def sealed_ids(node_ids: Iterable[int | None]) -> set[int]:
    """Which of these nodes are sealed now: their excerpts are hidden everywhere, the past
    included (a seal hides without erasing)."""
    ids = [i for i in set(node_ids) if i is not None]
    return {i for i, t in trust_map(ids).items() if t == Trust.SEALED}


def _day(value: str, *, name: str) -> datetime | None:
    if not value:
        return None
    try:
        day = datetime.combine(datetime.fromisoformat(value).date(), time(), tzinfo=UTC)
    except ValueError:
        raise Invalid(f"{name} {value!r} is not a date (expected YYYY-MM-DD)") from None
    # `until` reaches a day past its date: both ends keep a day inside datetime's range.
    if not EARLIEST <= day <= LATEST - timedelta(days=1):
        raise Invalid(f"{name} {value!r} is out of range (years 0001 to 9999, not their edges)")
    return day


def filter_events(params: Mapping[str, str]) -> QuerySet[Event]:
    """Events newest first, narrowed by kind, reason, actor (a prefix, "agent:" optional),
    node, domain (the node's), batch (the bulk act they belong to) and a UTC date range on the
    audit clock (Event.at; `until` includes its whole day).

    Refuses (Invalid) an unknown kind, a non-numeric node, a batch that is not a batch id or a
    date that is not YYYY-MM-DD.
    """
    qs = Event.objects.all()
    kind = (params.get("kind") or "").strip()
    if kind:
        if kind not in EventKind.values:
            raise Invalid(f"unknown event kind {kind!r}")
        qs = qs.filter(kind=kind)
    if reason := (params.get("reason") or "").strip():
        qs = qs.filter(reason=reason)
    if actor := (params.get("actor") or "").strip():
        # A prefix, with or without "agent:": `claude` finds agent:claude-desk and agent:claude.
        bare = actor.removeprefix(AGENT_PREFIX)
        qs = qs.filter(Q(actor__startswith=actor) | Q(actor__startswith=AGENT_PREFIX + bare))
    if node := (params.get("node") or "").strip():
        if (node_id := inputs.typed_node_id(node)) is None:
            raise Invalid(f"node {node!r} is not a node id")
        qs = qs.filter(node_id=node_id)
    if domain := (params.get("domain") or "").strip():
        qs = qs.filter(node__domain=domain)
    if batch := (params.get("batch") or "").strip():
        if not batches.BATCH_ID.fullmatch(batch):
            raise Invalid(f"batch {batch!r} is not a batch id")
        expr = RawSQL(batches.batch_sql("memory_event.detail"), ())  # the indexed expression
        qs = qs.annotate(batch=expr).filter(batch=batch)
    if since := _day((params.get("since") or "").strip(), name="since"):
        qs = qs.filter(at__gte=since)
    if until := _day((params.get("until") or "").strip(), name="until"):
        qs = qs.filter(at__lt=until + timedelta(days=1))
    return qs.order_by("-at", "-id")


def export_row(event: Event, *, sealed: bool, domain: str = "") -> dict[str, Any]:
    snap = event.snapshot or {}
    return {
        "id": event.pk,
        "at": event.at.isoformat(),
        "kind": event.kind,
        "node_id": event.node_id,
        "actor": event.actor,
        "reason": event.reason,
        "related_node_id": event.related_node_id,
        "domain": domain or snap.get("domain", ""),
        "excerpt": "" if sealed else snap.get("excerpt", ""),
        "access_count": snap.get("access_count"),
        "created_at": snap.get("created_at"),
        "referent_time": snap.get("referent_time"),
        "last_accessed_at": snap.get("last_accessed_at"),
        "token": event.token.name if event.token_id and event.token else "",
        "batch": (event.detail or {}).get("batch", ""),
        "query": (event.detail or {}).get("query", "") if event.kind == EventKind.RECALLED else "",
        "results": len((event.detail or {}).get("ids", []))
        if event.kind == EventKind.RECALLED
        else None,
    }


def _rows(qs: QuerySet[Event], *, chunk: int = 2000) -> Iterator[dict[str, Any]]:
    """Export rows in chunks, each chunk checking seals in one query (big logs stream)."""
    batch: list[Event] = []
    for event in qs.select_related("token").iterator(chunk_size=chunk):
        batch.append(event)
        if len(batch) == chunk:
            yield from _emit(batch)
            batch = []
    yield from _emit(batch)


def _emit(batch: list[Event]) -> Iterator[dict[str, Any]]:
    sealed = sealed_ids(e.node_id for e in batch)
    for event in batch:
        yield export_row(event, sealed=event.node_id in sealed)


# Spreadsheets run a cell that starts with one of these as a formula (CSV injection, OWASP).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: a leading ' before a formula start. Numbers and
    None pass as they are (only text can be a formula)."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_lines(qs: QuerySet[Event]) -> Iterator[str]:
    writer = csv.DictWriter(_Echo(), fieldnames=EXPORT_FIELDS)
    yield writer.writeheader()
    for row in _rows(qs):
        yield writer.writerow({name: _cell(value) for name, value in row.items()})


def json_chunks(qs: QuerySet[Event]) -> Iterator[str]:
    yield '{"events": ['
    first = True
    for row in _rows(qs):
        yield ("" if first else ",\n") + json.dumps(row, cls=DjangoJSONEncoder)
        first = False
    yield "]}\n"
