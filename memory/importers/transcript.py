"""Chat transcripts (a JSON list of {role, content, time} messages, or JSONL) via the write path.

Choice: a transcript is a past conversation brought in, not a turn made here, so it is wild and
never touches the scroll (pairs are for conversations held through Grove). Each file becomes one
`import` node (source = the file's absolute path, metadata.file_hash = sha256 of its bytes) and
one `utterance` node per message, derived_from the import and responds_to the message before it.
Utterances are occurrences (never merged by content), so idempotency comes from a hash chain:
each utterance carries metadata.chain = sha256(previous chain + the message). Re-importing an
unchanged file adds nothing; a file that grew (or was edited) adds a new import node and only the
messages after the longest prefix already on record, responding to the last message of that
prefix; the old stays on record. `system` messages are transport scaffolding and are skipped.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.db import transaction
from tqdm import tqdm

from memory.clocks import parse_instant
from memory.errors import GroveError, Invalid
from memory.importers import files
from memory.models import EdgeKind, Jurisdiction, Kind, Node
from memory.write import scrub, write_node

ACTOR = "importer:transcript"
SUFFIXES = frozenset({".json", ".jsonl"})
PROGRESS_MIN_MESSAGES = 500
SKIPPED_ROLES = frozenset({"system"})


@dataclass
class TranscriptSummary:
    files_seen: int = 0
    files_new: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_failed: int = 0
    nodes_created: int = 0
    messages_new: int = 0
    messages_existing: int = 0
    messages_skipped: int = 0
    errors: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = (
            f"{self.files_seen} files ({self.files_new} new, {self.files_changed} changed, "
            f"{self.files_unchanged} unchanged, {self.files_failed} failed); "
            f"{self.nodes_created} nodes created ({self.messages_new} new messages, "
            f"{self.messages_existing} already present, {self.messages_skipped} skipped)"
        )
        return "\n".join([text, *(f"  ! {error}" for error in self.errors)])


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    time: datetime | None
    name: str
    chain: str


def _content(value: Any, *, where: str) -> str:
    # Chat APIs send content as text or as a list of parts; only text parts are words.
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            part["text"] if isinstance(part, dict) else str(part)
            for part in value
            if isinstance(part, str)
            or (isinstance(part, dict) and isinstance(part.get("text"), str))
        )
    raise Invalid(f"{where}: content must be text", code="bad_message")


def _time(value: Any, *, tz: str | None, where: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return parse_instant(value, field=f"{where} time")
    except Invalid as exc:
        if exc.code != "naive_datetime" or not tz:
            raise
    # A naive time is read in the zone the owner named with --tz, never guessed.
    try:
        zone = ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise Invalid(f"unknown time zone {tz!r}", code="bad_timezone") from None
    return parse_instant(datetime.fromisoformat(str(value).strip()).replace(tzinfo=zone))


def _records(path: Path) -> Any:
    """The file's JSON, read from the open file (JSONL line by line), never as one bytes blob."""
    with path.open(encoding="utf-8") as handle:
        if path.name.endswith(".jsonl"):
            return [json.loads(line) for line in handle if line.strip()]
        return json.load(handle)


def parse(path: Path, *, tz: str | None = None) -> list[Message]:
    """Messages of a JSON (list, or {"messages": [...]}) or JSONL transcript, validated whole
    before anything is written. Refuses (Invalid) malformed JSON (undecodable, too deep, an
    integer past 4,300 digits), messages without a role or text content, text that is not
    Unicode (lone surrogates), and naive times unless `tz` names their zone."""
    name = path.name
    try:
        data = _records(path)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError too
        raise Invalid(f"{name} is not a JSON transcript: {exc}", code="bad_json") from None
    if isinstance(data, dict):
        data = data.get("messages")
    if not isinstance(data, list):
        raise Invalid(f"{name}: expected a list of messages", code="bad_transcript")
    messages: list[Message] = []
    chain = ""
    for index, item in enumerate(data):
        where = f"{name} message {index + 1}"
        if not isinstance(item, dict) or not isinstance(item.get("role"), str):
            raise Invalid(f"{where}: needs a role and content", code="bad_message")
        role = item["role"].strip().lower()
        content = _content(item.get("content"), where=where)
        try:
            (content + str(item.get("name") or "")).encode("utf-8")
        except UnicodeEncodeError:
            raise Invalid(f"{where}: text holds a lone surrogate", code="bad_message") from None
        when = _time(item.get("time", item.get("timestamp")), tz=tz, where=where)
        chain = hashlib.sha256(
            json.dumps([chain, role, content, when.isoformat() if when else None]).encode()
        ).hexdigest()
        messages.append(Message(role, content, when, str(item.get("name") or ""), chain))
    return messages


def _skipped(message: Message) -> bool:
    return message.role in SKIPPED_ROLES or not scrub(message.content)


def _known_chains(source: str, *, domain: str) -> dict[str, int]:
    rows = Node.objects.filter(kind=Kind.UTTERANCE, domain=domain, source=source).values_list(
        "id", "metadata"
    )
    return {meta["chain"]: node_id for node_id, meta in rows if (meta or {}).get("chain")}


def _on_record(
    messages: list[Message], known: dict[str, int], *, summary: TranscriptSummary
) -> tuple[int, int | None]:
    """(where to start, the node the next message responds to): the longest prefix already on
    record (skipped messages were never written: step over them)."""
    start, before = 0, None
    while start < len(messages) and (messages[start].chain in known or _skipped(messages[start])):
        if messages[start].chain in known:
            before = known[messages[start].chain]
            summary.messages_existing += 1
        else:
            summary.messages_skipped += 1
        start += 1
    return start, before


def _write_import(
    path: Path,
    messages: list[Message],
    *,
    file_hash: str,
    previous: int | None,
    domain: str,
    actor: str,
) -> Node:
    """The import node standing for the file: its message count and date span."""
    source = str(path)
    times = [m.time for m in messages if m.time]
    span = f", {min(times):%Y-%m-%d} to {max(times):%Y-%m-%d}" if times else ""
    return write_node(
        body=f"Transcript {path.name}: {len(messages)} messages{span}.",
        kind=Kind.IMPORT,
        jurisdiction=Jurisdiction.WILD,
        signature=actor,
        source=source,
        domain=domain,
        referent_time=min(times) if times else None,
        metadata={
            "format": "transcript",
            "file_hash": file_hash,
            "messages": len(messages),
            **({"previous_import": previous} if previous else {}),
        },
        actor=actor,
    ).node


def _write_file(
    path: Path,
    messages: list[Message],
    *,
    file_hash: str,
    previous: int | None,
    domain: str,
    actor: str,
    summary: TranscriptSummary,
) -> None:
    source = str(path)
    start, before = _on_record(messages, _known_chains(source, domain=domain), summary=summary)
    imported = _write_import(
        path, messages, file_hash=file_hash, previous=previous, domain=domain, actor=actor
    )
    summary.nodes_created += 1
    show = len(messages) - start >= PROGRESS_MIN_MESSAGES
    for index in tqdm(
        range(start, len(messages)),
        desc=path.name,
        unit="msg",
        file=sys.stderr,
        disable=not show,
    ):
        message = messages[index]
        if _skipped(message):
            summary.messages_skipped += 1
            continue
        origins = [{"id": imported.pk, "relation": EdgeKind.DERIVED_FROM}]
        if before:
            origins.append({"id": before, "relation": EdgeKind.RESPONDS_TO})
        node = write_node(
            body=message.content,
            kind=Kind.UTTERANCE,
            jurisdiction=Jurisdiction.WILD,
            signature=message.name or message.role,
            origins=origins,
            source=source,
            domain=domain,
            referent_time=message.time,
            metadata={"role": message.role, "index": index, "chain": message.chain},
            actor=actor,
        ).node
        before = node.pk
        summary.nodes_created += 1
        summary.messages_new += 1


def ingest(
    path: str | Path,
    *,
    tz: str | None = None,
    domain: str | None = None,
    actor: str = ACTOR,
) -> TranscriptSummary:
    """Import a transcript file (.json or .jsonl) or a folder of them through write_node.

    Reads the store clock (created_at) and takes each message's time as its event clock
    (referent_time). One transaction per file: a file that fails (validation, unreadable, a link
    out of the folder, over GROVE_MAX_IMPORT_BYTES) stores nothing and is reported; the others
    go on. Refuses (Invalid) a path that is neither file nor folder, and a single named file
    that fails (its refusal is the answer).
    """
    domain = domain or "personal"
    root, paths = files.find(Path(path).expanduser().resolve(), SUFFIXES)
    summary = TranscriptSummary(files_seen=len(paths))
    single = Path(path).expanduser().is_file()
    for file_path in paths:
        counts = (
            summary.nodes_created,
            summary.messages_new,
            summary.messages_existing,
            summary.messages_skipped,
        )
        try:
            status = _import_file(
                file_path, root=root, tz=tz, domain=domain, actor=actor, summary=summary
            )
        except (GroveError, ValueError, RecursionError) as exc:
            if single and isinstance(exc, GroveError):
                raise  # one named file: its refusal is the answer, stated whole
            (
                summary.nodes_created,
                summary.messages_new,
                summary.messages_existing,
                summary.messages_skipped,
            ) = counts
            summary.files_failed += 1
            reason = f"{exc.code}: {exc.message}" if isinstance(exc, GroveError) else repr(exc)
            summary.errors.append(f"{file_path.name}: {reason}")
            continue
        setattr(summary, f"files_{status}", getattr(summary, f"files_{status}") + 1)
    return summary


def _import_file(
    file_path: Path,
    *,
    root: Path,
    tz: str | None,
    domain: str,
    actor: str,
    summary: TranscriptSummary,
) -> str:
    """Import one file in one transaction: 'new', 'changed' or 'unchanged'. Refuses (Invalid) a
    link out of the root, a file over the size limit or unreadable, and what parse refuses."""
    if refused := files.refusal(file_path, root=root):
        raise Invalid(refused, code="refused_file")
    try:
        file_hash = files.sha256_of(file_path)
        latest = (
            Node.objects.filter(kind=Kind.IMPORT, domain=domain, source=str(file_path))
            .order_by("-id")
            .values_list("id", "metadata")
            .first()
        )
        if latest and (latest[1] or {}).get("file_hash") == file_hash:
            return "unchanged"
        messages = parse(file_path, tz=tz)
    except OSError as exc:
        raise Invalid(f"could not be read ({exc.strerror})", code="unreadable") from None
    previous = latest[0] if latest else None
    with transaction.atomic():
        _write_file(
            file_path,
            messages,
            file_hash=file_hash,
            previous=previous,
            domain=domain,
            actor=actor,
            summary=summary,
        )
    return "changed" if previous else "new"
