"""Run each of a module's mutants against a few test files, in one process, one at a time.

    cd mutants && ../.venv/bin/python ../scripts/mutants_against.py 'memory.scrub*' \
        tests/engine/test_scrub.py

For pure modules whose own tests are short (memory/scrub.py): mutmut runs every test that covers
a function (for scrub, the ~950 tests that write a node), which takes minutes a mutant on a
loaded machine. Here each mutant meets only the named files, so a kill is a kill by them and a
survivor may still die elsewhere: the score is a lower bound. mutmut's trampoline reads
MUTANT_UNDER_TEST at every call, so one process serves every mutant. The first line is the
unmutated code, which must pass. Mutant names come from `mutmut results` (run `mutmut run` once
to generate them); the first argument is shell globs over them (as mutmut run takes),
comma-separated. A mutant whose run passes `--limit` seconds (default 120) is stopped and counted
as timed out (a loop that never ends is a kill, as mutmut counts it): look at each one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

MUTMUT = Path(__file__).resolve().parent.parent / ".venv" / "bin" / "mutmut"


class _TimedOut(Exception):
    """Raised into the running test when a mutant's time is up; the test fails, pytest goes on."""


def _stop(_signum: int, _frame: object) -> None:
    raise _TimedOut("the mutant's time limit passed")


def _limit(args: list[str]) -> tuple[float, list[str]]:
    if args[:1] == ["--limit"]:
        return float(args[1]), args[2:]
    return 120.0, args


def main(pattern: str, tests: list[str]) -> int:
    limit, tests = _limit(tests)
    signal.signal(signal.SIGALRM, _stop)
    listing = subprocess.run(
        [str(MUTMUT), "results", "--all", "true"], capture_output=True, text=True, cwd=".."
    ).stdout
    names = [line.split(":")[0].strip() for line in listing.splitlines()]
    names = [n for n in names if any(fnmatchcase(n, p) for p in pattern.split(","))]
    verdicts = {0: "survived", 1: "killed"}
    for name in ["", *names]:
        os.environ["MUTANT_UNDER_TEST"] = name
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            code = int(pytest.main(["-q", "-x", "-p", "no:cacheprovider", *tests]))
        finally:
            left, _interval = signal.setitimer(signal.ITIMER_REAL, 0)
        verdict = verdicts.get(code, f"error {code}")
        if left == 0 and code != 0:
            verdict = "timed out"
        if not name:
            name, verdict = "unmutated", "passes" if code == 0 else f"FAILS ({code})"
        print(f"{name}: {verdict}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
