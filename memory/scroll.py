"""The scroll: an append-only JSONL file per conversation, and the pairs that point into it.

Each line is one turn: {"seq", "at", "conversation", "user", "assistant", "signature", "domain",
"referent_time", "sha256"}, where sha256 is the hash of the record's canonical JSON without the
sha256 field. A pair node carries a pointer (path relative to the scroll directory, byte offset
of its line, record sha256) so the words it was made from can always be found and re-hashed.

Reads are bounded (READ_LIMIT bytes per call): the scroll is a record to consult, never a
document to hand out whole.

A conversation belongs to a domain: the same name in two domains is two scrolls, with their own
sequence numbers and responds_to chains. Files: `<conversation>.jsonl` for the default domain
(`personal`, where every scroll lived before scrolls had domains, so existing files keep working
and keep growing) and `<domain>/<conversation>.jsonl` for every other domain.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memory.clocks import parse_instant
from memory.errors import Invalid, NotFound, TooLarge
from memory.models import ApiToken, EdgeKind, Jurisdiction, Kind, Node
from memory.scrub import redact
from memory.write import ScrollPointer, WriteResult, check_lengths, scrub, write_node

READ_LIMIT = 8192
# A conversation name becomes a file name: letters, digits, dot, dash, underscore; no leading
# dot (hidden files, "..") and no separators, so it can never leave the scroll directory.
_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_CHUNK = 65536
# The domain whose scrolls keep the top-level names they had before scrolls belonged to domains.
DEFAULT_DOMAIN = "personal"


def scroll_dir() -> Path:
    path = Path(settings.GROVE_SCROLL_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def scroll_name(conversation: str, domain: str = DEFAULT_DOMAIN) -> str:
    """The scroll's file name, relative to the scroll directory: one per (domain, conversation).
    Refuses unsafe conversation names and domains (Invalid)."""
    if not isinstance(conversation, str) or not _SAFE_NAME.fullmatch(conversation):
        raise Invalid(
            f"conversation name {conversation!r} is not allowed: use 1-128 letters, digits, "
            "'.', '-' or '_', not starting with '.' or '-'",
            code="bad_conversation",
        )
    if domain == DEFAULT_DOMAIN:
        return f"{conversation}.jsonl"
    if not isinstance(domain, str) or not _SAFE_NAME.fullmatch(domain):
        raise Invalid(f"domain {domain!r} cannot name a scroll folder", code="bad_domain")
    return f"{domain}/{conversation}.jsonl"


def _path(conversation: str, domain: str = DEFAULT_DOMAIN) -> Path:
    return scroll_dir() / scroll_name(conversation, domain)


def record_hash(record: dict[str, Any]) -> str:
    """sha256 of the record's canonical JSON, the sha256 field itself left out."""
    content = {key: value for key, value in record.items() if key != "sha256"}
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _last_record(handle: BinaryIO) -> dict[str, Any] | None:
    """The last parseable record, scanning backwards so a long scroll is never read whole."""
    end = handle.seek(0, os.SEEK_END)
    tail = b""
    position = end
    while position > 0:
        step = min(_CHUNK, position)
        position -= step
        handle.seek(position)
        tail = handle.read(step) + tail
        lines = tail.split(b"\n")
        # The first piece may be a partial line unless we reached the start of the file.
        complete = lines if position == 0 else lines[1:]
        for line in reversed(complete):
            if not line.strip():
                continue
            try:
                record: dict[str, Any] = json.loads(line)
                return record
            except ValueError:
                continue  # a torn line from a crash: keep looking further back
        tail = lines[0] if position > 0 else b""
    return None


def _append(
    conversation: str, domain: str, record: dict[str, Any]
) -> tuple[str, int, dict[str, Any]]:
    """Append one record under an exclusive file lock; return (relative path, offset, record).

    The lock (fcntl.flock) keeps two processes from interleaving lines or reusing a sequence
    number; fsync makes the line durable before the pair that points at it is committed.
    """
    name = scroll_name(conversation, domain)
    path = scroll_dir() / name
    path.parent.mkdir(exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "r+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            last = _last_record(handle)
            end = handle.seek(0, os.SEEK_END)
            if end:
                handle.seek(end - 1)
                if handle.read(1) != b"\n":
                    # A torn line from a crash stays on record (verify_scroll reports it); the
                    # new record starts on a line of its own.
                    handle.write(b"\n")
                    end += 1
            record = {"seq": (int(last["seq"]) + 1) if last else 1, **record}
            record["sha256"] = record_hash(record)
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
            handle.write(line.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return name, end, record


def _check_turn(
    *,
    conversation: str,
    user: Any,
    assistant: Any,
    signature: Any,
    domain: Any,
    referent_time: str | datetime | None,
) -> tuple[str, str, dict[str, int], datetime | None]:
    """commit_turn's checks, all before the scroll is touched: the turn's words with their
    credentials redacted (the scroll keeps a record of the words, never a secret), what was
    redacted, and the referent."""
    if not isinstance(domain, str) or not domain.strip():
        raise Invalid("domain must be a non-empty label", code="bad_domain")
    scroll_name(conversation, domain)
    if not isinstance(user, str) or not isinstance(assistant, str):
        raise Invalid("user and assistant must be text", code="bad_body")
    user, in_user = redact(user)
    assistant, in_assistant = redact(assistant)
    body = f"user: {user}\nassistant: {assistant}"
    if len(body) > settings.GROVE_MAX_BODY_CHARS:
        raise TooLarge(
            f"turn has {len(body)} characters; the limit is {settings.GROVE_MAX_BODY_CHARS}"
        )
    if not scrub(user) and not scrub(assistant):
        raise Invalid("the turn is empty once transport scaffolding is removed", code="empty_body")
    if not isinstance(signature, str) or not signature.strip():
        raise Invalid("signature is required: say who wrote this", code="unsigned")
    check_lengths(source="", signature=signature)
    referent = parse_instant(referent_time)
    return user, assistant, dict(Counter(in_user) + Counter(in_assistant)), referent


def _previous_pair(conversation: str, domain: str, name: str) -> int | None:
    """The conversation's latest pair in this domain (the new pair responds_to it)."""
    # The same domain only, so no responds_to edge crosses domains; the top-level file
    # too, where this domain's turns may sit from before scrolls had domains.
    return (
        Node.objects.filter(
            kind=Kind.PAIR,
            domain=domain,
            scroll_path__in={name, scroll_name(conversation)},
        )
        .order_by("-id")
        .values_list("pk", flat=True)
        .first()
    )


def commit_turn(
    *,
    conversation: str,
    user: str,
    assistant: str,
    signature: str = "owner",
    domain: str = "personal",
    referent_time: str | datetime | None = None,
    holder: str | None = None,
    token: ApiToken | None = None,
) -> WriteResult:
    """Append a turn to the conversation's scroll, then write its pair node (recording the
    agent `token` it came through, if any).

    The pair points into the scroll of (domain, conversation) (path, offset, record hash),
    responds_to the previous pair of the conversation in the same domain, and cites every wild
    node `holder` read since their last pair. Reads the store clock to stamp the record and the
    pair. Refuses (Invalid) unsafe conversation names or domains, non-text or empty turns, blank
    signatures, naive referent times; (TooLarge) turns longer than the body limit. All checks
    run before the scroll is touched. The database write lock is taken before the file lock,
    so the two never deadlock.
    """
    from memory.cites import consume_cites

    user, assistant, redacted, referent = _check_turn(
        conversation=conversation,
        user=user,
        assistant=assistant,
        signature=signature,
        domain=domain,
        referent_time=referent_time,
    )

    with transaction.atomic():
        name, offset, record = _append(
            conversation,
            domain,
            {
                "at": timezone.now().isoformat(),
                "conversation": conversation,
                "user": user,
                "assistant": assistant,
                "signature": signature,
                "domain": domain,
                "referent_time": referent.isoformat() if referent else None,
            },
        )
        previous = _previous_pair(conversation, domain, name)
        result = write_node(
            body=f"user: {user}\nassistant: {assistant}",
            kind=Kind.PAIR,
            jurisdiction=Jurisdiction.HOME,
            signature=signature,
            origins=[{"id": previous, "relation": EdgeKind.RESPONDS_TO}] if previous else [],
            domain=domain,
            referent_time=referent,
            metadata={"conversation": conversation, "seq": record["seq"]},
            scroll=ScrollPointer(path=name, offset=offset, hash=record["sha256"]),
            token=token,
            redacted=redacted,
        )
        if holder:
            consume_cites(holder=holder, pair=result.node)
    return result


def _size(conversation: str, domain: str) -> tuple[Path, int]:
    path = _path(conversation, domain)
    if not path.exists():
        raise NotFound(f"no scroll for conversation {conversation!r}")
    return path, path.stat().st_size


def _bounded(length: Any, *, what: str) -> int:
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise Invalid(f"{what} must be a non-negative whole number of bytes", code="bad_range")
    if length > READ_LIMIT:
        raise TooLarge(
            f"{what} of {length} bytes is over the {READ_LIMIT}-byte limit: the scroll is read "
            "in bounded slices, never whole"
        )
    return length


def read_tail(
    conversation: str, *, max_bytes: int = READ_LIMIT, domain: str = DEFAULT_DOMAIN
) -> bytes:
    """The last `max_bytes` bytes of the scroll (at most READ_LIMIT). Refuses larger reads."""
    _bounded(max_bytes, what="tail")
    path, size = _size(conversation, domain)
    with path.open("rb") as handle:
        handle.seek(max(0, size - max_bytes))
        return handle.read(max_bytes)


def read_slices(
    conversation: str, ranges: Iterable[tuple[int, int]], *, domain: str = DEFAULT_DOMAIN
) -> list[bytes]:
    """Several (offset, length) slices in one call. Refuses when their union covers more than
    READ_LIMIT bytes, so adjacent slices cannot rebuild what one oversized read may not."""
    spans = []
    for item in ranges:
        try:
            offset, length = item
        except (TypeError, ValueError):
            raise Invalid("each range is (offset, length)", code="bad_range") from None
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise Invalid("offset must be a non-negative whole number", code="bad_range")
        spans.append((offset, _bounded(length, what="slice")))
    covered = 0
    reach = -1
    for start, length in sorted(spans):
        end = start + length
        if end > reach:
            covered += end - max(start, reach)
            reach = end
    if covered > READ_LIMIT:
        raise TooLarge(
            f"these slices together cover {covered} bytes, over the {READ_LIMIT}-byte limit"
        )
    path, size = _size(conversation, domain)
    out = []
    with path.open("rb") as handle:
        for start, length in spans:
            handle.seek(min(start, size))
            out.append(handle.read(length))
    return out


def read_slice(
    conversation: str, *, offset: int, length: int, domain: str = DEFAULT_DOMAIN
) -> bytes:
    """`length` bytes (at most READ_LIMIT) from byte `offset` of the scroll."""
    return read_slices(conversation, [(offset, length)], domain=domain)[0]


def read_scroll(conversation: str) -> bytes:
    """Refused, always: a scroll is never read whole (use read_tail or read_slice)."""
    raise TooLarge(
        f"the scroll of {conversation!r} is never read whole; read a tail or slices of at most "
        f"{READ_LIMIT} bytes"
    )


def verify_scroll(conversation: str, *, domain: str = DEFAULT_DOMAIN) -> dict[str, Any]:
    """Re-hash every record and check sequence numbers run 1, 2, 3 ... without gaps.

    Streams the file line by line (the check reads it all, but hands nothing out). Returns
    {"conversation", "records", "ok", "problems": [...]}.
    """
    _size(conversation, domain)
    return {"conversation": conversation, **verify_scroll_file(scroll_name(conversation, domain))}


def verify_scroll_file(name: str) -> dict[str, Any]:
    """verify_scroll for the scroll a pair points at (its stored scroll_path, relative to the
    scroll directory): {"records", "ok", "problems"}. A missing file is a problem, not an error."""
    base = scroll_dir().resolve()
    path = (base / name).resolve()
    if not path.is_relative_to(base):
        return {"records": 0, "ok": False, "problems": ["the pointer leaves the scroll directory"]}
    if not path.is_file():
        return {"records": 0, "ok": False, "problems": ["the scroll file is missing"]}
    problems: list[str] = []
    count = 0
    expected = 1
    offset = 0
    with path.open("rb") as handle:
        for line in handle:
            here, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                problems.append(f"offset {here}: not a JSON record (torn or edited line)")
                continue
            count += 1
            if record.get("sha256") != record_hash(record):
                problems.append(f"offset {here}: seq {record.get('seq')} does not match its hash")
            if record.get("seq") != expected:
                problems.append(f"offset {here}: seq {record.get('seq')}, expected {expected}")
            expected = (record.get("seq") or expected) + 1
    pairs = Node.objects.filter(kind=Kind.PAIR, scroll_path=name)
    for pair_id, pair_offset, pair_hash in pairs.values_list("pk", "scroll_offset", "scroll_hash"):
        if pair_offset is None:  # the constraint memory_node_pair_has_scroll_pointer forbids it
            problems.append(f"pair {pair_id} has no scroll offset")
            continue
        with path.open("rb") as handle:
            handle.seek(pair_offset)
            line = handle.readline()
        try:
            matches = json.loads(line).get("sha256") == pair_hash
        except ValueError:
            matches = False
        if not matches:
            problems.append(f"pair {pair_id} points at offset {pair_offset}, which does not match")
    return {"records": count, "ok": not problems, "problems": problems}
