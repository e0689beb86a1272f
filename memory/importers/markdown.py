"""Markdown and text files, and folders of them (an Obsidian-style vault), through the write path.

Shape of an import (formats "markdown" and "vault" are the same importer):
- one wild `import` node per file: source = the file's absolute path, metadata.file_hash = the
  sha256 of its bytes; its body names the file (the content lives in the sections);
- each section (split on ATX headings outside code fences; YAML front matter is kept in the
  import's metadata, not as a note) becomes a wild `note` derived_from the file's import node;
- [[wikilinks]] become `cites` edges between the files' (latest) import nodes, resolved after
  every file is in, by file name or vault-relative path; links to missing notes are counted.

Re-import is idempotent: a file whose latest import has the same hash adds nothing. A changed file
gets a new import node (the old stays on record); its unchanged sections are already live under
the same content key, so the write path returns them (counted as existing, linked to the new
import) and only changed sections become new notes.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from tqdm import tqdm

from memory.errors import Conflict, GroveError
from memory.importers import files
from memory.models import Edge, EdgeKind, Jurisdiction, Kind, Node
from memory.write import write_node

ACTOR = "importer:markdown"
SUFFIXES = frozenset({".md", ".markdown", ".txt"})
PROGRESS_MIN_FILES = 50
LINK_BATCH = 500
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_WIKILINK = re.compile(r"!?\[\[([^\]\|#\^\n]+)(?:[#\^][^\]\|\n]*)?(?:\|[^\]\n]*)?\]\]")


@dataclass
class VaultSummary:
    files_seen: int = 0
    files_new: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_failed: int = 0
    nodes_created: int = 0
    sections_new: int = 0
    sections_existing: int = 0
    sections_revived: int = 0
    sections_refused: int = 0
    links: int = 0
    links_new: int = 0
    links_missing: int = 0
    errors: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = (
            f"{self.files_seen} files ({self.files_new} new, {self.files_changed} changed, "
            f"{self.files_unchanged} unchanged, {self.files_failed} failed); "
            f"{self.nodes_created} nodes created ({self.sections_new} new sections, "
            f"{self.sections_existing} already present, {self.sections_revived} revived, "
            f"{self.sections_refused} refused as rejected); {self.links} links "
            f"({self.links_new} new), {self.links_missing} to missing notes"
        )
        return "\n".join([text, *(f"  ! {error}" for error in self.errors)])


@dataclass
class _File:
    path: Path
    rel: str
    source: str
    text: str
    file_hash: str
    import_id: int | None = None


def split_front_matter(text: str) -> tuple[str, str]:
    """(front matter, rest) for a file that opens with a '---' YAML block; else ('', text)."""
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            after = text.find("\n", end + 4)
            rest = "" if after == -1 else text[after + 1 :]
            return text[4:end], rest
    return "", text


def sections(text: str) -> list[tuple[str, str]]:
    """Split markdown into (heading, section text) on ATX headings outside code fences. Text
    before the first heading is a section with heading ''. Blank sections are dropped."""
    found: list[tuple[str, list[str]]] = [("", [])]
    fence: str | None = None
    for line in text.split("\n"):
        if fence_match := _FENCE.match(line):
            marker = fence_match.group(1)
            fence = None if fence == marker else (fence or marker)
        elif fence is None and (heading := _HEADING.match(line)):
            found.append((heading.group(2).strip(), []))
        found[-1][1].append(line)
    return [(heading, body) for heading, lines in found if (body := "\n".join(lines).strip())]


def wikilinks(text: str) -> list[str]:
    """The distinct targets of [[target]], [[target|alias]], [[target#heading]], ![[embed]]."""
    seen: list[str] = []
    for match in _WIKILINK.finditer(text):
        target = match.group(1).strip()
        if target and target not in seen:
            seen.append(target)
    return seen


def _key(name: str) -> str:
    name = name.strip().replace("\\", "/").casefold()
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _latest_imports(sources: list[str], *, domain: str) -> dict[str, tuple[int, str]]:
    """source -> (id, file_hash) of the latest import node of each file, in few queries."""
    latest: dict[str, tuple[int, str]] = {}
    for start in range(0, len(sources), 500):
        rows = (
            Node.objects.filter(
                kind=Kind.IMPORT, domain=domain, source__in=sources[start : start + 500]
            )
            .order_by("id")
            .values_list("id", "source", "metadata")
        )
        for node_id, source, metadata in rows:
            latest[source] = (node_id, (metadata or {}).get("file_hash", ""))
    return latest


def section_slug(heading: str) -> str:
    """The `#slug` a section's source carries (drift finds the section again by it)."""
    return re.sub(r"[^\w]+", "-", heading.casefold()).strip("-")


def _write_file(
    item: _File, *, previous: int | None, domain: str, actor: str, summary: VaultSummary
) -> None:
    front, rest = split_front_matter(item.text)
    parts = sections(rest)
    title = Path(item.rel).stem
    metadata: dict[str, Any] = {
        "format": "markdown",
        "file_hash": item.file_hash,
        "path": item.rel,
        "sections": len(parts),
    }
    if front:
        metadata["front_matter"] = front
    if previous:
        metadata["previous_import"] = previous
    imported = write_node(
        body=f"{title}\n\nImported file {item.rel} ({len(parts)} sections).",
        kind=Kind.IMPORT,
        jurisdiction=Jurisdiction.WILD,
        signature=actor,
        source=item.source,
        domain=domain,
        metadata=metadata,
        actor=actor,
    ).node
    item.import_id = imported.pk
    summary.nodes_created += 1
    for index, (heading, body) in enumerate(parts):
        try:
            result = write_node(
                body=body,
                kind=Kind.NOTE,
                jurisdiction=Jurisdiction.WILD,
                signature=actor,
                origins=[{"id": imported.pk, "relation": EdgeKind.DERIVED_FROM}],
                source=f"{item.source}#{section_slug(heading)}" if heading else item.source,
                domain=domain,
                metadata={
                    "file_hash": item.file_hash,
                    "path": item.rel,
                    "section": index,
                    "heading": heading,
                },
                actor=actor,
            )
        except Conflict:
            # The owner rejected these words once: they stay out; the rest of the file comes in.
            summary.sections_refused += 1
            continue
        if result.status == "created":
            summary.sections_new += 1
            summary.nodes_created += 1
        elif result.status == "revived":
            summary.sections_revived += 1
        else:
            summary.sections_existing += 1


def _link(items: list[_File], *, actor: str, summary: VaultSummary) -> None:
    by_name: dict[str, int] = {}
    for item in items:
        if item.import_id is None:
            continue
        by_name.setdefault(_key(item.rel), item.import_id)
        by_name.setdefault(_key(Path(item.rel).name), item.import_id)
    pending: list[tuple[int, int]] = []
    for item in items:
        if item.import_id is None:
            continue
        for target in wikilinks(item.text):
            target_id = by_name.get(_key(target)) or by_name.get(_key(Path(target).name))
            if target_id is None:
                summary.links_missing += 1
            elif target_id != item.import_id:
                summary.links += 1
                pending.append((item.import_id, target_id))
    for start in range(0, len(pending), LINK_BATCH):
        with transaction.atomic():
            for from_id, to_id in pending[start : start + LINK_BATCH]:
                _, created = Edge.objects.get_or_create(
                    from_node_id=from_id,
                    to_node_id=to_id,
                    kind=EdgeKind.CITES,
                    defaults={"created_by": actor},
                )
                summary.links_new += created


def _read_files(paths: list[Path], *, root: Path, summary: VaultSummary) -> list[_File]:
    """Each file's text and hash; one refused (a link out of the vault, too large), undecodable
    or unreadable is counted as failed with its reason and left out."""
    items: list[_File] = []
    for file_path in paths:
        rel = file_path.relative_to(root).as_posix()
        if refused := files.refusal(file_path, root=root):
            summary.files_failed += 1
            summary.errors.append(f"{rel}: {refused}")
            continue
        try:
            raw = file_path.read_bytes()
            text = raw.decode("utf-8").replace("\r\n", "\n")
        except UnicodeDecodeError:
            summary.files_failed += 1
            summary.errors.append(f"{rel}: not UTF-8 text")
            continue
        except OSError as exc:
            summary.files_failed += 1
            summary.errors.append(f"{rel}: could not be read ({exc.strerror})")
            continue
        items.append(_File(file_path, rel, str(file_path), text, hashlib.sha256(raw).hexdigest()))
    return items


def ingest(
    path: str | Path,
    *,
    tz: str | None = None,
    domain: str | None = None,
    actor: str = ACTOR,
    progress: bool | None = None,
) -> VaultSummary:
    """Import a markdown/text file or a folder of them (a vault) through write_node.

    Reads the store clock only (created_at of new nodes); file times are not taken as event
    times. One transaction per file: a file that fails (undecodable, unreadable, a link out of
    the vault, over GROVE_MAX_IMPORT_BYTES, a section over the body limit) stores nothing and is
    reported, the others go on. Refuses (Invalid) a path that is neither a file nor a folder.
    `tz` is accepted for the ingest command's sake and unused.
    """
    domain = domain or "personal"
    # .obsidian, .git, .trash: the vault's machinery, not its notes
    root, paths = files.find(Path(path).expanduser().resolve(), SUFFIXES, skip_hidden=True)
    summary = VaultSummary(files_seen=len(paths))
    items = _read_files(paths, root=root, summary=summary)
    latest = _latest_imports([item.source for item in items], domain=domain)
    show = progress if progress is not None else len(items) >= PROGRESS_MIN_FILES
    for item in _progress(items, show=show):
        previous_id, previous_hash = latest.get(item.source, (None, ""))
        if previous_id and previous_hash == item.file_hash:
            item.import_id = previous_id
            summary.files_unchanged += 1
            continue
        before = (
            summary.nodes_created,
            summary.sections_new,
            summary.sections_existing,
            summary.sections_revived,
            summary.sections_refused,
        )
        try:
            with transaction.atomic():
                _write_file(item, previous=previous_id, domain=domain, actor=actor, summary=summary)
        except GroveError as exc:
            # Nothing of this file was stored: undo its counts, keep the previous import linked.
            (
                summary.nodes_created,
                summary.sections_new,
                summary.sections_existing,
                summary.sections_revived,
                summary.sections_refused,
            ) = before
            item.import_id = previous_id
            summary.files_failed += 1
            summary.errors.append(f"{item.rel}: {exc.code}: {exc.message}")
            continue
        if previous_id:
            summary.files_changed += 1
        else:
            summary.files_new += 1
    _link(items, actor=actor, summary=summary)
    return summary


def _progress(items: list[_File], *, show: bool) -> Iterable[_File]:
    bar: Iterable[_File] = tqdm(
        items, desc="import", unit="file", file=sys.stderr, disable=not show
    )
    return bar
