"""Which files an importer may read, checked before a byte of them is read.

- A symlink (or a path through a symlinked folder) whose target lies outside the root being
  imported is refused: importing a vault must never pull in /etc/hostname.
- A file over GROVE_MAX_IMPORT_BYTES is refused on its size (stat), before it is opened.
- Hashes are computed in chunks, so hashing never holds a large file whole.
Refusals are per file (a sentence for the summary); the caller goes on with the others.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings

from memory.errors import Invalid


def find(
    root: Path, suffixes: Iterable[str], *, skip_hidden: bool = False
) -> tuple[Path, list[Path]]:
    """(folder, files): the root's importable files, or the one file it names. `root` is taken
    as given (not resolved), so links inside it are judged against it. Refuses (Invalid) a root
    that is neither a file nor a folder."""
    if root.is_file():
        return root.parent, [root]
    if not root.is_dir():
        raise Invalid(f"no such file or folder: {root}", code="no_file")
    wanted = {suffix.lower() for suffix in suffixes}
    found = [
        path
        for path in root.rglob("*")
        if path.suffix.lower() in wanted
        and (path.is_file() or path.is_symlink())  # a dangling link is reported, not skipped
        and not (skip_hidden and any(p.startswith(".") for p in path.relative_to(root).parts))
    ]
    return root, sorted(found)


def refusal(path: Path, *, root: Path) -> str | None:
    """Why `path` may not be read, or None. Judged on its real path and its size alone."""
    real = path.resolve()
    if not real.is_relative_to(root.resolve()):
        return f"a link to {real}, outside {root}: not followed"
    if not real.is_file():
        return "a link to nothing (or not a regular file)"
    return too_large(real)


def too_large(path: Path) -> str | None:
    """Why the file is too large to import (judged on its size, unread), or None."""
    size = path.stat().st_size
    if size > settings.GROVE_MAX_IMPORT_BYTES:
        return (
            f"{size:,} bytes, over the import limit of {settings.GROVE_MAX_IMPORT_BYTES:,} "
            "(GROVE_MAX_IMPORT_BYTES); not read"
        )
    return None


def sha256_of(path: Path) -> str:
    """sha256 of the file's bytes, read in chunks."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
