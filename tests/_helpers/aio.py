"""Run an async client from a sync test, whatever loop the session already runs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import anyio


def run_async(main):
    """anyio.run(main) in a thread of its own: pytest-playwright's sync API keeps an asyncio loop
    on the main thread for the whole session, and anyio refuses to nest inside it."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, main).result()


@contextmanager
def outside_any_loop() -> Iterator[None]:
    """Run the body as a server's worker thread would: with no asyncio loop marked running.
    The /mcp view starts its own loop (anyio.run), which it may in production, where Django runs
    a sync view in a thread of its own; in a test session pytest-playwright's loop is marked
    running on the main thread, and anyio refuses to nest inside it."""
    loop = asyncio._get_running_loop()
    asyncio._set_running_loop(None)
    try:
        yield
    finally:
        asyncio._set_running_loop(loop)
