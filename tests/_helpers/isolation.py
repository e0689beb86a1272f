"""How a pytest process run by `make mutate` keeps its test database its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def own_test_database(default: dict[str, Any], vendor: str, pid: int) -> None:
    """Name the SQLite test database after the process: mutmut runs its clean run, its
    forced-fail run and each mutant in separate processes, and a process that rebuilt a file
    another still held open failed its first write with "disk I/O error", counted as a kill.
    Grove's engine is `grove.sqlite`, so the test asks the connection's vendor, not the
    engine's dotted name. PostgreSQL's test database is a fresh one per run already."""
    if vendor != "sqlite":
        return
    path = Path(default["TEST"]["NAME"])
    if path.stem.endswith(f"-{pid}"):
        return  # named already: this process runs pytest again (scripts/mutants_against.py)
    default["TEST"]["NAME"] = str(path.with_name(f"{path.stem}-{pid}{path.suffix}"))
