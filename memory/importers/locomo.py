"""LoCoMo conversations (Maharana et al., ACL 2024) into the graph, through the write path.

Per sample: a domain named by its sample_id (unless one is given); per session an `import` node
(wild, source `<sample_id>#session_N`); per turn an `utterance` node (wild, signed by its speaker,
source `<sample_id>#<dia_id>`, referent_time from the session date), derived_from its session and
responds_to the previous turn of that session.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.db import transaction

from memory.errors import Invalid
from memory.importers import files
from memory.models import Kind, Node
from memory.write import write_node

ACTOR = "importer:locomo"
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y")


@dataclass
class IngestSummary:
    samples: int = 0
    skipped: list[str] = field(default_factory=list)
    sessions: int = 0
    turns: int = 0
    domains: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = (
            f"{self.samples} sample{'s' * (self.samples != 1)} imported "
            f"({self.sessions} sessions, {self.turns} turns)"
            + (f" into {', '.join(self.domains)}" if self.domains else "")
        )
        if self.skipped:
            text += f"; skipped as already present: {', '.join(self.skipped)}"
        return text + "."


def parse_session_date(text: str, *, tz: str | None) -> datetime:
    """Parse a LoCoMo session date ('1:56 pm on 8 May, 2023') in the time zone `tz`, to UTC.

    Refuses (Invalid) a date it cannot read, and any date when no time zone was given: LoCoMo
    dates carry no zone, and a zone is never guessed.
    """
    cleaned = " ".join(str(text).split())
    for fmt in _DATE_FORMATS:
        try:
            naive = datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
        break
    else:
        raise Invalid(f"unreadable LoCoMo session date {text!r}", code="bad_datetime")
    if not tz:
        raise Invalid(
            f"session date {text!r} has no time zone; pass --tz (e.g. --tz UTC) so it is not "
            "guessed",
            code="naive_datetime",
        )
    return naive.replace(tzinfo=_zone(tz)).astimezone(UTC)


def _zone(tz: str) -> ZoneInfo:
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise Invalid(f"unknown time zone {tz!r}", code="bad_timezone") from None


def turn_body(turn: dict[str, Any]) -> str:
    """The turn's words, with a shared photo's caption kept as part of what was said."""
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        text = f"{text} [shares a photo: {caption}]".strip()
    return text


def _sessions(conversation: dict[str, Any]) -> list[tuple[int, list[dict[str, Any]]]]:
    found = []
    for key, value in conversation.items():
        if (match := _SESSION_KEY.match(key)) and isinstance(value, list):
            found.append((int(match.group(1)), value))
    return sorted(found, key=lambda item: item[0])


def _load(path: str | Path) -> list[dict[str, Any]]:
    try:
        if refused := files.too_large(Path(path)):
            raise Invalid(f"{path}: {refused}", code="too_large")
        with Path(path).open(encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise Invalid(f"no such file: {path}", code="no_file") from None
    except (ValueError, RecursionError) as exc:
        raise Invalid(f"{path} is not JSON: {exc}", code="bad_json") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(
        isinstance(s, dict) and "sample_id" in s and isinstance(s.get("conversation"), dict)
        for s in data
    ):
        raise Invalid(
            "not LoCoMo: expected a list of samples with sample_id and conversation",
            code="bad_format",
        )
    return data


def _validate_dates(samples: list[dict[str, Any]], *, tz: str | None) -> None:
    # Every date is checked before anything is written: a refusal stores nothing.
    for sample in samples:
        conversation = sample["conversation"]
        for number, _ in _sessions(conversation):
            parse_session_date(conversation.get(f"session_{number}_date_time", ""), tz=tz)


def ingest(
    path: str | Path, *, tz: str | None = None, domain: str | None = None, actor: str = ACTOR
) -> IngestSummary:
    """Write every sample of a LoCoMo file through write_node, one transaction per sample.

    Reads the store clock (created_at, one microsecond apart so turn order is store order).
    Refuses (Invalid) a file that is not LoCoMo, an unreadable date, or any date when `tz` is
    not given. A sample whose first session is already in its domain is skipped, not duplicated.
    """
    samples = _load(path)
    _validate_dates(samples, tz=tz)
    summary = IngestSummary()
    for sample in samples:
        sample_id = str(sample["sample_id"])
        target = domain or sample_id
        if Node.objects.filter(
            domain=target, kind=Kind.IMPORT, source=f"{sample_id}#session_1"
        ).exists():
            summary.skipped.append(sample_id)
            continue
        with transaction.atomic():
            _ingest_sample(
                sample, sample_id=sample_id, domain=target, tz=tz, actor=actor, summary=summary
            )
        summary.samples += 1
        if target not in summary.domains:
            summary.domains.append(target)
    return summary


def _ingest_sample(
    sample: dict[str, Any],
    *,
    sample_id: str,
    domain: str,
    tz: str | None,
    actor: str,
    summary: IngestSummary,
) -> None:
    conversation = sample["conversation"]
    tick = datetime.now(UTC)
    for number, turns in _sessions(conversation):
        raw_date = conversation.get(f"session_{number}_date_time", "")
        when = parse_session_date(raw_date, tz=tz)
        session = write_node(
            body=f"LoCoMo conversation {sample_id}, session {number}, {raw_date}.",
            kind=Kind.IMPORT,
            jurisdiction="wild",
            signature=actor,
            source=f"{sample_id}#session_{number}",
            domain=domain,
            referent_time=when,
            metadata={"format": "locomo", "sample_id": sample_id, "session": number},
            actor=actor,
            created_at=tick,
        ).node
        summary.sessions += 1
        previous: Node | None = None
        for turn in turns:
            body = turn_body(turn)
            speaker = str(turn.get("speaker") or "").strip()
            if not body or not speaker:
                continue  # an empty turn has nothing to remember; a turn needs its speaker
            tick += timedelta(microseconds=1)
            origins = [{"id": session.pk, "relation": "derived_from"}]
            if previous is not None:
                origins.append({"id": previous.pk, "relation": "responds_to"})
            previous = write_node(
                body=body,
                kind=Kind.UTTERANCE,
                jurisdiction="wild",
                signature=speaker,
                source=f"{sample_id}#{turn.get('dia_id', '')}",
                domain=domain,
                referent_time=when,
                metadata={"format": "locomo", "dia_id": turn.get("dia_id", "")},
                origins=origins,
                actor=actor,
                created_at=tick,
            ).node
            summary.turns += 1
        tick += timedelta(microseconds=1)
