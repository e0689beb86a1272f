"""Moving a whole memory between databases (SQLite <-> PostgreSQL): export and import.

The export is JSON lines: a header with the row counts and the chain's tail, then every row of
the record's tables in dependency and id order, each column as stored (datetimes at full
microsecond precision and vectors as base64, so every hash recomputes exactly). Import loads it
into a freshly migrated, empty database with the same ids, moves PostgreSQL's sequences past
them, then verifies before it commits: the counts, the tail, the whole hash chain from its first
event, every body hash, every node against its arrival and every token against its grant. A file
that fails any of these leaves the target database empty.

Not moved: walk tickets (short-lived by design), the django-q2 queue, the owner's login (run
`manage.py login_link` on the new database). Scroll files live beside the database, not in it:
copy GROVE_SCROLL_DIR along (integrity's scroll check says if they are missing).
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from django.core.exceptions import ValidationError
from django.core.management.color import no_style
from django.db import DatabaseError, connection, models, transaction

from memory.models import (
    ApiToken,
    ChainCheckpoint,
    Edge,
    Event,
    Mention,
    Node,
    PendingCite,
    RecallLog,
    SleepRun,
    Vector,
)

FORMAT = "grove-export/1"
# Parents before children (foreign keys), so rows insert in this order.
MODELS: list[type[models.Model]] = [
    ApiToken,
    Node,
    Edge,
    Vector,
    # Rebuildable like vectors, but moved: the SleepRun rows that follow say sleep found them.
    Mention,
    Event,
    ChainCheckpoint,
    RecallLog,
    PendingCite,
    SleepRun,
]
_BATCH = 1000


class TransferError(Exception):
    """The file or the target database refuses the move; nothing was kept."""


def _encode(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"$dt": value.isoformat()}
    if isinstance(value, bytes | memoryview):
        return {"$b64": base64.b64encode(bytes(value)).decode()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and len(value) == 1:
        if "$dt" in value:
            return datetime.fromisoformat(value["$dt"])
        if "$b64" in value:
            return base64.b64decode(value["$b64"])
    return value


def _columns(model: type[models.Model]) -> list[str]:
    return [f.attname for f in model._meta.concrete_fields]


def counts() -> dict[str, int]:
    return {m._meta.label: m._default_manager.count() for m in MODELS}


def _tail() -> str | None:
    return Event.objects.order_by("-id").values_list("chain_hash", flat=True).first()


def export(out: IO[str]) -> dict[str, int]:
    """Write the whole record to `out`; returns the row counts written."""
    with transaction.atomic():  # one consistent view of every table
        written = counts()
        header = {"format": FORMAT, "counts": written, "chain_tail": _tail()}
        out.write(json.dumps(header) + "\n")
        for model in MODELS:
            cols = _columns(model)
            for row in model._default_manager.order_by("pk").values_list(*cols).iterator():
                line = {"m": model._meta.label, "r": [_encode(v) for v in row]}
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return written


def _rows(lines: Iterator[bytes]) -> Iterator[tuple[str, list[Any]]]:
    for number, text in enumerate(lines, 2):
        try:
            line = json.loads(text)
            yield line["m"], [_decode(v) for v in line["r"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise TransferError(f"line {number} is not a row of an export ({exc})") from None


def import_into_empty(path: Path) -> dict[str, int]:
    """Load the export at `path` into this (migrated, empty) database and verify it; returns
    the counts. Raises TransferError, with nothing kept, when anything disagrees."""
    if any(counts().values()):
        raise TransferError("the target database already holds a memory: import needs it empty")
    by_label = {m._meta.label: m for m in MODELS}
    with path.open("rb") as handle:  # json reads UTF-8 bytes itself, whatever the locale
        try:
            header = json.loads(handle.readline())
        except ValueError:
            header = {}
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise TransferError(f"{path} is not a {FORMAT} file")
        try:
            with transaction.atomic():
                _load(_rows(handle), by_label)
                _reset_sequences()
                return _verify(header)
        except (DatabaseError, ValidationError, ValueError, TypeError) as exc:
            # A row the database or a field refuses (a duplicated id, "many" for a count, a
            # rooted hash its node does not have): the whole load is rolled back.
            raise TransferError(f"a row is refused: {_first_line(exc)}") from None


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _load(rows: Iterator[tuple[str, list[Any]]], by_label: dict[str, type[models.Model]]) -> None:
    """Insert rows in file order, a batch at a time; a table's rows are all in before the next
    table's start (an event's rooted-hash trigger reads its node)."""
    for label, run in itertools.groupby(rows, key=lambda row: row[0]):
        model = by_label.get(label)
        if model is None:
            raise TransferError(f"unknown table {label!r} in the export")
        columns = _columns(model)
        for chunk in itertools.batched(run, _BATCH):
            try:
                batch = [model(**dict(zip(columns, values, strict=True))) for _, values in chunk]
            except ValueError:
                raise TransferError(f"a {label} row has the wrong number of columns") from None
            model._default_manager.bulk_create(batch)


def _reset_sequences() -> None:
    """PostgreSQL's id sequences start past the imported ids (SQLite needs nothing)."""
    statements = connection.ops.sequence_reset_sql(no_style(), MODELS)
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def _verify(header: dict[str, Any]) -> dict[str, int]:
    """The imported rows' counts, once they agree with the export in every way checked here."""
    from memory.custody.chain_verify import verify
    from memory.custody.integrity import (
        body_hash_mismatch,
        nodes_disagree_with_arrival,
        tokens_disagree_with_grant,
    )

    problems = []
    if (have := counts()) != header.get("counts"):
        problems.append(f"row counts {have} differ from the export's {header.get('counts')}")
    if _tail() != header.get("chain_tail"):
        problems.append("the chain's last hash differs from the export's")
    report = verify()
    if not report.ok:
        problems.append(f"the hash chain breaks: {report.broken}")
    problems += body_hash_mismatch()[:5] + nodes_disagree_with_arrival()[:5]
    problems += tokens_disagree_with_grant()[:5]
    if problems:
        raise TransferError("; ".join(problems))
    return have
