"""Drift: ground that also lives in a file, checked against the file as it is now.

A node drifts when its source is a file path, its metadata holds the file's sha256 at import
("file_hash"), and the file is now missing or hashes differently.

A vault section (metadata "heading"; source `file.md#slug`, or the bare path for the text before
the first heading) is judged on its own words: it drifts when its file is missing, when no
section of that heading is left ("section missing"), or when the section's words changed
("changed": its body hash against the hash of the section now). An edit elsewhere in the file
is not drift for it.

Sleep runs the check (its "drift" step) and keeps what it found in the run; the node page, the
review queue and the overview read the latest run, so a page view never touches the files. The
owner answers drift by superseding the node with the file's words, or by keeping the words as
they are (`accept_drift`, a `drift_accepted` event holding the file's hash then): drift speaks
again only when the file moves on from that hash.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Q

from memory import audit
from memory.errors import Conflict, NotFound
from memory.importers.markdown import section_slug, sections, split_front_matter
from memory.models import Event, EventKind, Node, SleepRun, Trust
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
        # The importer wrote `<file>#<slug of the heading>` (the slug may be empty), or the file
        # alone for the text before the first heading: the heading says which, since a path may
        # hold a '#' too.
        heading = str(node.metadata["heading"])
        slug = section_slug(heading)
        if heading:
            source = source.removesuffix(f"#{slug}")
    path = Path(source).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    shown = f"{path}#{slug}" if slug else str(path)
    found: dict[str, Any] = {"id": node.pk, "path": shown, "section": slug, "changed_at": None}
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
        found["changed_at"] = _modified(path)
        return {**found, "problem": "changed", "recorded": recorded, "current": current}
    found["changed_at"] = _modified(path)
    now = _section_hashes(path, slug)
    if node.body_hash in now:
        return None
    if not now:
        return {**found, "problem": "section missing", "recorded": node.body_hash, "current": None}
    return {**found, "problem": "changed", "recorded": node.body_hash, "current": now[0]}


def _modified(path: Path) -> str:
    """The file's last change, as its file system says (ISO, UTC): the owner's "changed on"."""
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).isoformat()


def _ground_files() -> Any:
    return with_trust(
        Node.objects.exclude(source="")
        .exclude(source__contains="://")
        .filter(Q(metadata__has_key="file_hash"))
    ).filter(trust=Trust.GROUND)


def _accepted(ids: list[int]) -> dict[int, str | None]:
    """The file hash each node's latest `drift_accepted` event kept its words against."""
    kept: dict[int, str | None] = {}
    events = Event.objects.filter(kind=EventKind.DRIFT_ACCEPTED, node_id__in=ids)
    for node_id, detail in events.order_by("id").values_list("node_id", "detail"):
        kept[node_id] = (detail or {}).get("current")
    return kept


def find_drift(*, base: Path | None = None) -> list[dict[str, Any]]:
    """Ground nodes whose file (or section of it) is missing or changed: [{"id", "path",
    "section", "problem", "recorded", "current", "changed_at"}], problem being "missing",
    "section missing" or "changed"; for sections the hashes are of the section's words, else of
    the file. A node the owner kept against the file as it is now is not drift. Reads no clock
    (changed_at is the file's own); relative sources are resolved against `base` (default: the
    working directory). URLs are not files."""
    found = [
        problem
        for node in _ground_files().order_by("id")
        if (problem := _problem(node, base=base)) is not None
    ]
    kept = _accepted([problem["id"] for problem in found])
    return [p for p in found if p["id"] not in kept or kept[p["id"]] != p["current"]]


def accept_drift(node_id: int, *, actor: str, base: Path | None = None) -> dict[str, Any]:
    """The owner keeps a drifted ground node's words as they are: a `drift_accepted` event with
    the file's hash now (never the file's words). Refuses (Conflict) a node that does not drift,
    so the record never holds an answer to a question nobody asked."""
    with transaction.atomic():
        node = _ground_files().filter(pk=node_id).first()
        if node is None:
            if not Node.objects.filter(pk=node_id).exists():
                raise NotFound(f"node {node_id} does not exist")
            raise Conflict(f"node {node_id} is not ground from a file", code="not_file_ground")
        problem = _problem(node, base=base)
        if problem is None or _accepted([node_id]).get(node_id, "") == problem["current"]:
            raise Conflict(f"node {node_id} does not drift from its file", code="no_drift")
        audit.record(
            EventKind.DRIFT_ACCEPTED,
            node=node_id,
            actor=actor,
            detail={"problem": problem["problem"], "current": problem["current"]},
        )
    return problem


def last_found() -> dict[int, dict[str, Any]]:
    """What the latest finished sleep found drifting and still drifts for the record, by node id:
    a node kept against that file since, or no longer ground (superseded, sealed), drops out;
    changed_at is a datetime here. Empty before any sleep ran the step. Pages read this, never
    the files: a view stays a read of the database."""
    runs = SleepRun.objects.filter(dry_run=False, steps__has_key="drift").order_by("-id")
    steps = runs.values_list("steps", flat=True).first()
    found = {int(p["id"]): p for p in ((steps or {}).get("drift") or {}).get("nodes") or []}
    if not found:
        return {}
    kept = _accepted(list(found))
    ground = set(_ground_files().filter(pk__in=list(found)).values_list("pk", flat=True))
    return {
        node_id: {**p, "changed_at": p["changed_at"] and datetime.fromisoformat(p["changed_at"])}
        for node_id, p in found.items()
        if node_id in ground and (node_id not in kept or kept[node_id] != p["current"])
    }


def step(limit: int | None, dry_run: bool, beat: Any) -> dict[str, Any]:
    """Sleep's drift step: the check over every file-backed ground node (limit does not apply:
    a partial answer would hide drift)."""
    found = find_drift()
    return {"count": len(found), "nodes": found}
