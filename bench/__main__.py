"""`make bench`: run the benchmarks, print their tables and write docs/benchmarks.md.

Each module in SECTIONS has `run(sizes: list[int]) -> str` returning a Markdown section.
Usage: python -m bench [--only recall,sleep] [--sizes 10000,100000] [--days 365 --scale 0.1]
       [--policies 'keep everything,reach 90 d']
A run at other sizes (e.g. the opt-in `--sizes 1000000`, slow: the 1M graph alone takes minutes
to generate, then is cached) keeps the table rows of sizes it did not measure, and a part's
text below its BY_HAND line (method, command, machine) is kept as written.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import re
import sys
import time
from pathlib import Path

SECTIONS = [
    "recall",
    "sleep",
    "ceremony",
    "pages",
    "agents",
    "forgetting_pages",
    "api",
    "forgetting",
    "load",
    "batch",
    "watch",
    "secrets",
    "semantic",
]
DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
_SIZE_ROW = re.compile(r"^\| ([\d,]+) \|")


def _first_table_rows(lines: list[str]) -> list[str]:
    # Only the first table's rows: a later table led by sizes (the trigram one) is its own.
    rows = [i for i, line in enumerate(lines) if _SIZE_ROW.match(line)]
    if not rows:
        return []
    end = rows[0]
    while end < len(lines) and _SIZE_ROW.match(lines[end]):
        end += 1
    return lines[rows[0] : end]


def keep_other_sizes(old: str, new: str, sizes: list[int]) -> str:
    """`new` with the table rows of `old` (those led by a size) whose size this run did not
    measure, merged into new's first table in size order."""
    measured = {f"{n:,}" for n in sizes}
    carried = [
        line
        for line in _first_table_rows(old.splitlines())
        if (m := _SIZE_ROW.match(line)) and m.group(1) not in measured
    ]
    lines = new.splitlines()
    rows = [i for i, line in enumerate(lines) if _SIZE_ROW.match(line)]
    if not carried or not rows:
        return new
    end = rows[0]
    while end < len(lines) and _SIZE_ROW.match(lines[end]):
        end += 1
    block = sorted(
        [*lines[rows[0] : end], *carried],
        key=lambda line: int(_SIZE_ROW.match(line).group(1).replace(",", "")),
    )
    return "\n".join([*lines[: rows[0]], *block, *lines[end:]]) + "\n"


# A part's hand-written text (method, command, machine) follows this line, and a run of its
# bench keeps it: the bench writes only what it measured, above.
BY_HAND = "<!-- written by hand below: python -m bench keeps it -->"


def keep_by_hand(old: str, new: str) -> str:
    """`new` followed by `old`'s hand-written text (from its BY_HAND line on), if it has any."""
    if BY_HAND not in old:
        return new
    return new.rstrip() + "\n\n" + old[old.index(BY_HAND) :].rstrip() + "\n"


def section(module: object, old: str | None, new: str, sizes: list[int]) -> str:
    """A section's new text, with the old one's rows of sizes not measured (keep_other_sizes)
    unless its module says its tables are not led by sizes (SIZED = False: the forgetting
    simulator's are led by month numbers, which are no sizes to carry)."""
    if old is None or not getattr(module, "SIZED", True):
        return new
    return keep_other_sizes(old, new, sizes)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--days", default="", help="forgetting: days to simulate (365)")
    parser.add_argument("--scale", default="", help="forgetting: daily counts x this (0.1)")
    parser.add_argument("--policies", default="", help="forgetting: comma-separated (all)")
    parser.add_argument(
        "--integrity", default="", help="forgetting: sleep's checks nightly (default) or monthly"
    )
    args = parser.parse_args()
    if args.days:
        os.environ["GROVE_BENCH_DAYS"] = args.days
    if args.scale:
        os.environ["GROVE_BENCH_SCALE"] = args.scale
    if args.integrity:
        os.environ["GROVE_BENCH_INTEGRITY"] = args.integrity
    if args.policies:
        os.environ["GROVE_BENCH_POLICIES"] = args.policies
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grove.settings")
    import django

    django.setup()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    chosen = [s for s in SECTIONS if not args.only or s in args.only.split(",")]
    parts_dir = DOC.parent / "bench"
    parts_dir.mkdir(parents=True, exist_ok=True)
    for name in chosen:
        try:
            module = importlib.import_module(f"bench.{name}_bench")
        except ModuleNotFoundError:
            print(f"(no bench.{name}_bench yet)")
            continue
        print(f"== {name} ==", flush=True)
        started = time.perf_counter()
        text = module.run(sizes)
        print(text)
        print(f"({name}: {time.perf_counter() - started:.0f}s)")
        part = parts_dir / f"{name}.md"
        old = part.read_text() if part.exists() else None
        text = section(module, old, text, sizes)
        part.write_text((keep_by_hand(old, text) if old else text).strip() + "\n")
    assemble()
    return 0


def assemble() -> None:
    """docs/benchmarks.md from the sections' parts in docs/bench/."""
    parts_dir = DOC.parent / "bench"
    header = (
        "# Benchmarks\n\n"
        f"Written by `make bench` on {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}. "
        "Each section is rewritten when its benchmark runs (`python -m bench --only NAME`). "
        "The vector index's library comparison is docs/bench/ann-compare.md "
        "(bench/ann_compare.py).\n"
    )
    sections = [
        (parts_dir / f"{name}.md").read_text()
        for name in SECTIONS
        if (parts_dir / f"{name}.md").exists()
    ]
    DOC.write_text(header + "\n" + "\n".join(sections))


if __name__ == "__main__":
    sys.exit(main())
