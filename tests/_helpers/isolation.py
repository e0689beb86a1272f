"""How a pytest process run by `make mutate` keeps its test database its own."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


def own_test_database(default: dict[str, Any], vendor: str, pid: int) -> None:
    """Name the SQLite test database after the process: mutmut runs its clean run, its
    forced-fail run and each mutant in separate processes, and a process that rebuilt a file
    another still held open failed its first write with "disk I/O error", counted as a kill.
    Grove's engine is `grove.sqlite`, so the test asks the connection's vendor, not the
    engine's dotted name. PostgreSQL's test database is a fresh one per run already.
    An earlier process's suffix is replaced, not added to: scripts/mutants_against.py runs
    pytest once a mutant in one process, and a forked process inherits its parent's name."""
    if vendor != "sqlite":
        return
    path = Path(default["TEST"]["NAME"])
    stem = re.sub(r"(-\d+)+$", "", path.stem)
    default["TEST"]["NAME"] = str(path.with_name(f"{stem}-{pid}{path.suffix}"))
