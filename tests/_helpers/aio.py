"""Run an async client from a sync test, whatever loop the session already runs."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import anyio


def run_async(main):
    """anyio.run(main) in a thread of its own: pytest-playwright's sync API keeps an asyncio loop
    on the main thread for the whole session, and anyio refuses to nest inside it."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, main).result()
