"""`make bench`: run the benchmarks, print their tables and write docs/benchmarks.md.

Each module in SECTIONS has `run(sizes: list[int]) -> str` returning a Markdown section.
Usage: python -m bench [--only recall,sleep] [--sizes 10000,100000] [--days 365 --scale 0.1]
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
from pathlib import Path

SECTIONS = ["recall", "sleep", "ceremony", "pages", "api", "forgetting", "load"]
DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--days", default="", help="forgetting: days to simulate (365)")
    parser.add_argument("--scale", default="", help="forgetting: daily counts x this (0.1)")
    args = parser.parse_args()
    if args.days:
        os.environ["GROVE_BENCH_DAYS"] = args.days
    if args.scale:
        os.environ["GROVE_BENCH_SCALE"] = args.scale
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
        (parts_dir / f"{name}.md").write_text(text.strip() + "\n")
    header = (
        "# Benchmarks\n\n"
        f"Written by `make bench` on {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}. "
        "Each section is rewritten when its benchmark runs (`python -m bench --only NAME`).\n"
    )
    sections = [
        (parts_dir / f"{name}.md").read_text()
        for name in SECTIONS
        if (parts_dir / f"{name}.md").exists()
    ]
    DOC.write_text(header + "\n" + "\n".join(sections))
    return 0


if __name__ == "__main__":
    sys.exit(main())
