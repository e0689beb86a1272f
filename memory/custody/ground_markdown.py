"""What is true, as a folder of markdown files: one file per ground node, under its domain, with
front matter naming where its words came from and when the owner rooted them, and an index.

A copy for reading (an editor, a notes app, a backup you can open), not a transfer: `export`
moves the whole record; this holds ground only. Sealed nodes are not ground here (a seal hides
the words everywhere), nor are superseded, rejected or unreviewed ones.
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.models import Event, EventKind, Node, Trust
from memory.trust import with_trust

_SLUG = re.compile(r"[^a-z0-9]+")


def _slug(text: str, *, words: int = 8) -> str:
    slug = _SLUG.sub("-", " ".join(text.lower().split()[:words])).strip("-")
    return slug[:60].rstrip("-") or "node"


def _when(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def _front(fields: dict[str, Any]) -> str:
    # JSON scalars are YAML scalars: quotes and newlines in a source or in adopting words stay
    # inside their value, so no body can close the front matter early.
    lines = [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items()]
    return "---\n" + "\n".join(lines) + "\n---\n"


def _roots(ids: list[int]) -> dict[int, dict[str, Any]]:
    """The latest rooting act of each node: when, by whom, its adopting words, what it replaced."""
    latest: dict[int, dict[str, Any]] = {}
    # A supersede roots the new node with the old one's id in the detail (review/ceremony.py).
    events = Event.objects.filter(kind=EventKind.ROOTED, node_id__in=ids)
    for node_id, at, actor, detail in events.order_by("id").values_list(
        "node_id", "at", "actor", "detail"
    ):
        latest[node_id] = {"at": at, "actor": actor, **(detail or {})}
    return latest


def documents() -> Iterator[tuple[str, str]]:
    """(relative path, markdown text) for each ground node, then the index, in id order."""
    ground = with_trust(Node.objects.all()).filter(trust=Trust.GROUND).order_by("id")
    nodes = list(ground)
    roots = _roots([node.pk for node in nodes])
    index: list[str] = ["# What is true", ""]
    for node in nodes:
        root = roots[node.pk]  # ground only through a rooting act, which always adopts words
        path = f"{_slug(node.domain, words=3)}/{node.pk}-{_slug(node.body)}.md"
        fields: dict[str, Any] = {
            "id": node.pk,
            "domain": node.domain,
            "kind": node.kind,
            "jurisdiction": node.jurisdiction,
            "source": node.source,
            "written_by": node.signature,
            "arrived": _when(node.created_at),
            "about_time": _when(node.referent_time),
            "rooted": _when(root["at"]),
            "rooted_by": root["actor"],
            "adopting_words": root["adopting_words"],
            "body_sha256": node.body_hash,
        }
        if root.get("supersedes"):
            fields["replaces"] = root["supersedes"]
        yield path, _front(fields) + "\n" + node.body + "\n"  # scrub stores bodies stripped
        first_line = " ".join(node.body.split())[:80]
        rooted = fields["rooted"][:10]
        index.append(f"- [#{node.pk}]({path}) {first_line} ({node.domain}, rooted {rooted})")
    if not nodes:
        index.append("Nothing is ground yet.")
    yield "README.md", "\n".join(index) + "\n"


def write_folder(folder: Path) -> int:
    """Write the documents under `folder` (it must not exist, or be empty), readable by the owner
    alone; returns how many ground nodes were written."""
    if folder.exists() and any(folder.iterdir()):
        raise FileExistsError(f"{folder} is not empty")
    count = 0
    for relative, text in documents():
        target = folder / relative
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        count += relative != "README.md"
    folder.chmod(0o700)
    return count


def zip_bytes() -> bytes:
    """The same folder as one zip (the dashboard's download)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for relative, text in documents():
            archive.writestr(f"grove-ground/{relative}", text)
    return buffer.getvalue()
