"""Coding agents' session files (JSON Lines, one session a file) through the write path.

The formats (memory/importers/claude_code.py, codex.py) turn one parsed line into a `Line`:
the words in it (the user's, the agent's, and tool calls as short labelled lines), and what was
skipped and why. This module does the rest, the same for both:

- One conversation per session: the first words of a file write an `import` node standing for
  the session (source = the file's absolute path, metadata: format, session id, project), and
  every turn is a wild `utterance` derived_from it and responding to the turn before it in the
  file. Utterances are occurrences: identity is the line's own key, never its words.
- A line's key is its own id where the format has one (Claude Code's uuid), else the sha256 of
  its bytes (Codex's lines carry none). Keys already on record are never written again, so a
  re-import adds nothing and a file rewritten from the middle adds only the lines that are new.
- A cursor (SessionFile) remembers how far the file was read (the end of its last whole line)
  and the sha256 of those bytes: a grown file whose head still hashes the same is parsed from
  there; any other change re-reads it whole, the keys deciding what is new.
- A line that is not JSON is named in the summary and passed over; one over
  GROVE_MAX_SESSION_LINE_BYTES is refused alone, unread; a last line without its newline that
  does not parse is being written: it is left for the next read.
Each run of CHUNK_TURNS turns is one transaction with the cursor moved to its end, so a long
session never holds the write lock for long and a stopped import resumes where it stopped; a
file that fails keeps what its earlier runs committed, and is read on from there next time.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from tqdm import tqdm

from memory.clocks import parse_instant
from memory.errors import GroveError, Invalid
from memory.importers import files
from memory.models import EdgeKind, Jurisdiction, Kind, Node, SessionFile
from memory.write import scrub, write_node

SUFFIXES = frozenset({".jsonl"})
PROGRESS_MIN_TURNS = 500
CHUNK_TURNS = 500
LABEL_CHARS = 200  # a tool call's labelled line: enough for a command, never its output
TOOLS = ("lines", "skip")


@dataclass(frozen=True)
class Piece:
    role: str  # user, assistant or tool
    text: str


@dataclass
class Line:
    """What a format makes of one line of a session file."""

    key: str | None = None  # the line's own id; None: its bytes' hash stands in
    pieces: list[Piece] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # one reason per part left out
    time: Any = None
    session: str | None = None
    project: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class Format:
    name: str  # the --format name
    agent: str  # the agent's signature on its words
    title: str  # how the import node names the session
    read: Callable[..., Line]  # read(record, *, tools: bool) -> Line


@dataclass
class SessionSummary:
    files_seen: int = 0
    files_new: int = 0
    files_grown: int = 0
    files_reread: int = 0
    files_unchanged: int = 0
    files_failed: int = 0
    nodes_created: int = 0
    turns_new: int = 0
    tool_lines: int = 0
    turns_existing: int = 0
    waiting: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    malformed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, other: SessionSummary) -> None:
        for name in (
            "files_new",
            "files_grown",
            "files_reread",
            "files_unchanged",
            "nodes_created",
            "turns_new",
            "tool_lines",
            "turns_existing",
            "waiting",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.skipped.update(other.skipped)
        self.malformed.extend(other.malformed)

    def __str__(self) -> str:
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items())) or "nothing"
        text = (
            f"{self.files_seen} files ({self.files_new} new, {self.files_grown} grown, "
            f"{self.files_reread} re-read, {self.files_unchanged} unchanged, "
            f"{self.files_failed} failed); {self.nodes_created} nodes created "
            f"({self.turns_new} new turns, {self.tool_lines} tool lines, "
            f"{self.turns_existing} already present); skipped: {skipped}"
        )
        if self.waiting:
            text += f"; {self.waiting} unfinished last line left for the next read"
        if self.malformed:
            text += f"; {len(self.malformed)} malformed line{'s' * (len(self.malformed) > 1)}"
        notes = [*(f"  ! {m}" for m in self.malformed), *(f"  ! {e}" for e in self.errors)]
        return "\n".join([text, *notes])


def label(verb: str, what: str) -> str:
    """A tool call as one short line: 'ran: pytest -q'."""
    what = " ".join(what.split())
    if len(what) > LABEL_CHARS:
        what = what[: LABEL_CHARS - 1] + "…"
    return f"{verb}: {what}" if what else verb


def relative(path: str, project: str | None) -> str:
    """A path inside the project, relative to it (the project is in the import node)."""
    if project and path.startswith(project.rstrip("/") + "/"):
        return path[len(project.rstrip("/")) + 1 :]
    return path


_REMINDER = re.compile(r"<system-reminder\b[^>]*>.*?</system-reminder\s*>", re.DOTALL | re.I)


def without_reminders(text: str, skipped: list[str]) -> str:
    """The text without the system reminders the agent's harness wove into it (each counted)."""
    found = len(_REMINDER.findall(text))
    skipped.extend(["system reminders"] * found)
    return _REMINDER.sub("", text) if found else text


def domain_label(project: str | None) -> str:
    """The default domain of a project's sessions: its folder's name, as a label."""
    name = re.sub(r"[^a-z0-9._-]+", "-", Path(project or "").name.lower()).strip("-.")
    return name[:64] or "personal"


def _key(line: Line, raw: bytes) -> str:
    return line.key or "sha256:" + hashlib.sha256(raw.rstrip()).hexdigest()[:32]


@dataclass(frozen=True)
class _Parsed:
    number: int  # its line number in the file
    line: Line
    raw: bytes
    end: int  # the offset just past it, and the sha256 of the bytes up to there
    head: str


@dataclass
class _Read:
    lines: list[_Parsed]
    resumed: bool  # read from the cursor on, its head unchanged
    offset: int  # the end of the last whole line read
    head: Any  # the running sha256 of bytes[:offset]
    count: int  # whole lines in bytes[:offset]


def _rest_of_line(handle: IO[bytes], head: Any) -> bool:
    """Read (and hash) the rest of an over-long line without holding it; True when it ended
    with its newline, False at the end of the file."""
    while rest := handle.readline(1 << 20):
        head.update(rest)
        if rest.endswith(b"\n"):
            return True
    return False


def _read(
    path: Path, cursor: SessionFile | None, fmt: Format, *, tools: bool, out: SessionSummary
) -> _Read:
    """Parse the file from the cursor when its head still hashes the same, else from its
    start. Never holds more than GROVE_MAX_SESSION_LINE_BYTES + 1 bytes of one line."""
    limit = settings.GROVE_MAX_SESSION_LINE_BYTES
    head = hashlib.sha256()
    resumed, number = False, 0
    with path.open("rb") as handle:
        if cursor:
            head.update(handle.read(cursor.offset))
            resumed = head.hexdigest() == cursor.head_sha256
            if resumed:
                number = cursor.lines
            else:
                head = hashlib.sha256()
                handle.seek(0)
        offset = handle.tell()
        parsed: list[_Parsed] = []
        while raw := handle.readline(limit + 1):
            ended = raw.endswith(b"\n")
            if len(raw) > limit and not ended:
                mark = head.copy()
                mark.update(raw)
                if not _rest_of_line(handle, mark):
                    out.waiting += 1  # an over-long last line, still being written
                    break
                head, number, offset = mark, number + 1, handle.tell()
                out.malformed.append(
                    f"{path.name} line {number}: over {limit:,} bytes "
                    "(GROVE_MAX_SESSION_LINE_BYTES); refused alone"
                )
                continue
            try:
                record = json.loads(raw) if raw.strip() else None
            except ValueError as exc:
                if not ended:
                    out.waiting += 1  # the last line without its newline: still being written
                    break
                record, error = None, f"not JSON ({exc})"
            else:
                error = "" if record is None or isinstance(record, dict) else "not a JSON object"
            number += 1
            head.update(raw)
            offset += len(raw)
            if isinstance(record, dict):
                try:
                    line = fmt.read(record, tools=tools)
                    parsed.append(_Parsed(number, line, raw, offset, head.hexdigest()))
                except (ValueError, TypeError, AttributeError) as exc:
                    error = f"not a {fmt.name} line ({exc})"
            if error:
                out.malformed.append(f"{path.name} line {number}: {error}")
    return _Read(parsed, resumed, offset, head, number)


def _known(source: str, *, domain: str) -> dict[str, int]:
    rows = Node.objects.filter(kind=Kind.UTTERANCE, domain=domain, source=source)
    return {
        meta["line"]: pk
        for pk, meta in rows.values_list("id", "metadata")
        if isinstance(meta, dict) and meta.get("line")
    }


def _time(value: Any) -> datetime | None:
    try:
        return parse_instant(value, field="time") if isinstance(value, str) and value else None
    except Invalid:
        return None  # a time a line cannot vouch for is no time, never a guess


def _session_node(
    path: Path, fmt: Format, read: _Read, *, domain: str, project: str | None, actor: str
) -> tuple[Node, bool]:
    """The session's import node, written with its first words: (node, whether new)."""
    existing = (
        Node.objects.filter(kind=Kind.IMPORT, domain=domain, source=str(path))
        .order_by("id")
        .first()
    )
    if existing:
        return existing, False
    session = next((p.line.session for p in read.lines if p.line.session), None)
    times = [t for p in read.lines if (t := _time(p.line.time))]
    where = f" in {project}" if project else ""
    when = f", from {min(times):%Y-%m-%d %H:%M} UTC" if times else ""
    node = write_node(
        body=f"{fmt.title} session {session or path.stem}{where}{when}.",
        kind=Kind.IMPORT,
        jurisdiction=Jurisdiction.WILD,
        signature=actor,
        source=str(path),
        domain=domain,
        referent_time=min(times) if times else None,
        metadata={
            "format": fmt.name,
            "session": session or path.stem,
            **({"project": project} if project else {}),
        },
        actor=actor,
    ).node
    return node, True


def _last_turn(source: str, *, domain: str) -> int | None:
    rows = Node.objects.filter(kind=Kind.UTTERANCE, domain=domain, source=source)
    return rows.order_by("-id").values_list("id", flat=True).first()


@dataclass
class _Session:
    """What one file's chunks carry from one to the next."""

    path: Path
    fmt: Format
    read: _Read
    domain: str
    project: str | None
    actor: str
    node: Node | None = None
    before: int | None = None  # the turn the next one responds to


def _write(state: _Session, chunk: list[_Parsed], *, out: SessionSummary) -> None:
    """Write the chunk's turns that are not on record yet (looked up under the write lock, so
    two scans of one file write each line once)."""
    source = str(state.path)
    known = _known(source, domain=state.domain)
    limit = settings.GROVE_MAX_BODY_CHARS
    for parsed in chunk:
        line = parsed.line
        out.skipped.update(line.skipped)
        key = _key(line, parsed.raw)
        for index, piece in enumerate(line.pieces):
            piece_key = key if index == 0 else f"{key}:{index}"
            if piece_key in known:
                state.before = known[piece_key]
                out.turns_existing += 1
                continue
            body = scrub(piece.text)
            if not body:
                out.skipped["empty"] += 1
                continue
            try:
                body.encode("utf-8")
            except UnicodeEncodeError:
                out.malformed.append(
                    f"{state.path.name} line {parsed.number}: text holds a lone surrogate; "
                    "refused alone"
                )
                continue
            if len(body) > limit:
                out.malformed.append(
                    f"{state.path.name} line {parsed.number}: {len(body):,} characters, over "
                    f"GROVE_MAX_BODY_CHARS ({limit:,}); refused alone"
                )
                continue
            if state.node is None:
                state.node, created = _session_node(
                    state.path,
                    state.fmt,
                    state.read,
                    domain=state.domain,
                    project=state.project,
                    actor=state.actor,
                )
                out.nodes_created += created
            origins: list[dict[str, Any]] = [
                {"id": state.node.pk, "relation": EdgeKind.DERIVED_FROM}
            ]
            if state.before:
                origins.append({"id": state.before, "relation": EdgeKind.RESPONDS_TO})
            node = write_node(
                body=body,
                kind=Kind.UTTERANCE,
                jurisdiction=Jurisdiction.WILD,
                signature="user" if piece.role == "user" else (line.model or state.fmt.agent),
                origins=origins,
                source=source,
                domain=state.domain,
                referent_time=_time(line.time),
                metadata={"format": state.fmt.name, "role": piece.role, "line": piece_key},
                actor=state.actor,
            ).node
            known[piece_key] = state.before = node.pk
            out.nodes_created += 1
            if piece.role == "tool":
                out.tool_lines += 1
            else:
                out.turns_new += 1


def _chunks(lines: list[_Parsed]) -> list[list[_Parsed]]:
    """The lines in runs of about CHUNK_TURNS turns: each run is one transaction, so a long
    session never holds the write lock for long (the web server's writers wait on it)."""
    chunks: list[list[_Parsed]] = [[]]
    turns = 0
    for parsed in lines:
        if turns >= CHUNK_TURNS:
            chunks.append([])
            turns = 0
        chunks[-1].append(parsed)
        turns += len(parsed.line.pieces)
    return chunks


def ingest_file(
    path: Path,
    fmt: Format,
    *,
    root: Path,
    domain: str | None,
    tools: bool,
    actor: str,
) -> SessionSummary:
    """Import what is new in one session file, a transaction per run of turns with its
    cursor; the file's own summary. Reads the store clock (created_at) and takes each line's
    time as its turn's event clock. Refuses (Invalid) a link out of `root`, a file over
    GROVE_MAX_IMPORT_BYTES or unreadable (nothing stored); a write refused mid-file keeps the
    runs before it."""
    out = SessionSummary(files_seen=1)
    if refused := files.refusal(path, root=root):
        raise Invalid(refused, code="refused_file")
    try:
        stat = path.stat()
        cursor = SessionFile.objects.filter(path=str(path)).first()
        if cursor and (cursor.format != fmt.name or (domain and domain != cursor.domain)):
            cursor = None  # another format or domain: these lines were never read for it
        read = _read(path, cursor, fmt, tools=tools, out=out)
    except OSError as exc:
        raise Invalid(f"could not be read ({exc.strerror})", code="unreadable") from None
    if (
        cursor
        and read.resumed
        and read.offset == cursor.offset
        and (cursor.size, cursor.mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    ):
        out.files_unchanged += 1  # nothing to write and nothing to move: no write lock taken
        return out
    project = next((p.line.project for p in read.lines if p.line.project), None)
    project = project or (_project_of(path, domain=cursor.domain) if cursor else None)
    chosen = domain or (cursor.domain if cursor else domain_label(project))
    state = _Session(path, fmt, read, domain=chosen, project=project, actor=actor)
    chunks = _chunks(read.lines)
    todo = sum(len(p.line.pieces) for p in read.lines)
    bar = tqdm(
        total=todo,
        desc=path.name,
        unit="turn",
        file=sys.stderr,
        disable=todo < PROGRESS_MIN_TURNS,
    )
    for number, chunk in enumerate(chunks, start=1):
        last = number == len(chunks)
        with transaction.atomic():
            if state.before is None and read.resumed:
                state.before = _last_turn(str(path), domain=chosen)
            _write(state, chunk, out=out)
            # The cursor moves with each chunk: a run stopped half-way resumes after it.
            SessionFile.objects.update_or_create(
                path=str(path),
                defaults={
                    "format": fmt.name,
                    "domain": chosen,
                    "size": max(stat.st_size, read.offset),
                    "mtime_ns": stat.st_mtime_ns if last else 0,
                    "offset": read.offset if last else chunk[-1].end,
                    "head_sha256": read.head.hexdigest() if last else chunk[-1].head,
                    "lines": read.count if last else chunk[-1].number,
                    "updated_at": timezone.now(),
                },
            )
        bar.update(sum(len(p.line.pieces) for p in chunk))
    bar.close()
    if cursor is None:
        out.files_new += 1
    elif read.resumed and read.offset == cursor.offset:
        out.files_unchanged += 1
    elif read.resumed:
        out.files_grown += 1
    else:
        out.files_reread += 1
    return out


def _project_of(path: Path, *, domain: str) -> str | None:
    meta = (
        Node.objects.filter(kind=Kind.IMPORT, domain=domain, source=str(path))
        .values_list("metadata", flat=True)
        .first()
    )
    return meta.get("project") if isinstance(meta, dict) else None


def ingest(
    path: str | Path,
    fmt: Format,
    *,
    domain: str | None = None,
    tools: str = "lines",
    actor: str,
) -> SessionSummary:
    """Import a session file, or every .jsonl under a folder, through write_node (see the
    module's docstring). Refuses (Invalid) a path that is neither file nor folder, an unknown
    `tools`, and a single named file that fails (its refusal is the answer); in a folder, a
    file that fails is named in the summary and the others go on."""
    if tools not in TOOLS:
        raise Invalid(f"tools must be one of {', '.join(TOOLS)}", code="bad_tools")
    given = Path(path).expanduser()
    root, paths = files.find(given.resolve(), SUFFIXES)
    summary = SessionSummary(files_seen=len(paths))
    for file_path in paths:
        try:
            one = ingest_file(
                file_path, fmt, root=root, domain=domain, tools=tools == "lines", actor=actor
            )
        except GroveError as exc:
            if given.is_file():
                raise
            summary.files_failed += 1
            summary.errors.append(f"{file_path.name}: {exc.code}: {exc.message}")
            continue
        summary.add(one)
    return summary
