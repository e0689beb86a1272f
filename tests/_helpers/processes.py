"""Other processes a test starts (the real `serve`): a free port, its login line, its group."""

from __future__ import annotations

import queue
import re
import socket
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def link_from(lines: queue.Queue, seen: list[str]) -> str | None:
    """The login link, once a line read from `lines` (each kept in `seen`) carries it."""
    try:
        line = lines.get(timeout=0.5)
    except queue.Empty:
        return None
    seen.append(line)
    match = re.search(r"(http://\S+/login/link/\S+)", line)
    return match.group(1) if match else None


def group_alive(pgid: int) -> bool:
    """Any live (non-zombie) process left in the process group."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False
