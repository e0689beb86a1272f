"""Drift: ground that also lives in a file, checked against the file as it is now.

A node drifts when its source is a file path, its metadata holds the file's sha256 at import
("file_hash"), and the file is now missing or hashes differently.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.db.models import Q

from memory.models import Node, Trust
from memory.trust import with_trust


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def find_drift(*, base: Path | None = None) -> list[dict[str, Any]]:
    """Ground nodes whose file is missing or changed: [{"id", "path", "problem", "recorded",
    "current"}], problem being "missing" or "changed". Reads no clock; relative sources are
    resolved against `base` (default: the working directory). URLs are not files."""
    candidates = with_trust(
        Node.objects.exclude(source="")
        .exclude(source__contains="://")
        .filter(Q(metadata__has_key="file_hash"))
    ).filter(trust=Trust.GROUND)
    found = []
    for node in candidates.order_by("id"):
        path = Path(node.source).expanduser()
        if not path.is_absolute():
            path = (base or Path.cwd()) / path
        recorded = str(node.metadata.get("file_hash", ""))
        if not path.is_file():
            found.append(
                {
                    "id": node.pk,
                    "path": str(path),
                    "problem": "missing",
                    "recorded": recorded,
                    "current": None,
                }
            )
            continue
        current = file_sha256(path)
        if current != recorded:
            found.append(
                {
                    "id": node.pk,
                    "path": str(path),
                    "problem": "changed",
                    "recorded": recorded,
                    "current": current,
                }
            )
    return found
