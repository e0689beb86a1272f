"""The pages that show what agents did, timed alone (bench/pages_bench.py's AGENT_PAGES, on the
same synthetic graphs with three agents' week of recalls and reads): `python -m bench --only
agents --sizes 100000`."""

from __future__ import annotations

from bench import pages_bench


def run(sizes: list[int]) -> str:
    # "audit log" (unfiltered) calibrates: its row in pages.md was measured on a quieter machine.
    names = [
        *(name for name, _ in pages_bench.AGENT_PAGES),
        *pages_bench.AGENT_SHARED_PAGES,
        "audit log",
    ]
    title = (
        "## Agents' pages\n\n"
        f"Three agents, each with {pages_bench.AGENT_EVENTS_A_DAY} recalls and as many reads a "
        f"day for {pages_bench.AGENT_DAYS} days, through their tokens (plus the dashboard "
        "pages' usual graph). The agents page and the audit log filtered by actor and day. "
        "Command: `python -m bench --only agents --sizes 100000`; `audit log` (unfiltered) is "
        "repeated from the pages table to calibrate the machine's load at the time."
    )
    return pages_bench.run(sizes, only=names, title=title)
