"""Drift: ground that also lives in a file, checked against the file as it is now.

A node drifts when its source is a file path, its metadata holds the file's sha256 at import
("file_hash"), and the file is now missing or hashes differently.

A vault section (metadata "heading"; source `file.md#slug`, or the bare path for the text before
the first heading) is judged on its own words: it drifts when its file is missing, when no
section of that heading is left ("section missing"), or when the section's words changed
("changed": its body hash against the hash of the section now). An edit elsewhere in the file
is not drift for it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.db.models import Q

from memory.importers.markdown import section_slug, sections, split_front_matter
from memory.models import Node, Trust
from memory.trust import with_trust
from memory.write import body_hash_of, scrub


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _section_hashes(path: Path, slug: str) -> list[str]:
    """Body hashes of the file's sections under this heading slug, as the importer stores them
    ('' is the text before the first heading)."""
    text = path.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")
    _, rest = split_front_matter(text)
    return [
        body_hash_of(scrub(body))
        for heading, body in sections(rest)
        if (section_slug(heading) if heading else "") == slug
    ]


def _problem(node: Node, *, base: Path | None) -> dict[str, Any] | None:
    source, slug = node.source, None
    if "heading" in (node.metadata or {}):
        source, _, slug = source.rpartition("#") if "#" in source else (source, "", "")
    path = Path(source).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    shown = f"{path}#{slug}" if slug else str(path)
    found = {"id": node.pk, "path": shown, "section": slug}
    if not path.is_file():
        return {
            **found,
            "problem": "missing",
            "recorded": node.metadata["file_hash"],
            "current": None,
        }
    if slug is None:
        recorded, current = str(node.metadata.get("file_hash", "")), file_sha256(path)
        if current == recorded:
            return None
        return {**found, "problem": "changed", "recorded": recorded, "current": current}
    now = _section_hashes(path, slug)
    if node.body_hash in now:
        return None
    if not now:
        return {**found, "problem": "section missing", "recorded": node.body_hash, "current": None}
    return {**found, "problem": "changed", "recorded": node.body_hash, "current": now[0]}


def find_drift(*, base: Path | None = None) -> list[dict[str, Any]]:
    """Ground nodes whose file (or section of it) is missing or changed: [{"id", "path",
    "section", "problem", "recorded", "current"}], problem being "missing", "section missing"
    or "changed"; for sections the hashes are of the section's words, else of the file. Reads
    no clock; relative sources are resolved against `base` (default: the working directory).
    URLs are not files."""
    candidates = with_trust(
        Node.objects.exclude(source="")
        .exclude(source__contains="://")
        .filter(Q(metadata__has_key="file_hash"))
    ).filter(trust=Trust.GROUND)
    return [
        problem
        for node in candidates.order_by("id")
        if (problem := _problem(node, base=base)) is not None
    ]
