"""Mutation score per module from mutmut's results (make mutate): killed / (killed + survived).

Timeouts count as killed (the mutant hung the suite); "no tests" counts as survived. "checked"
is how many of the module's mutants have a verdict (a run narrowed by MUTANTS leaves the rest
"not checked"), so a partial or sampled run says how much it covered."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter, defaultdict

KILLED = {"killed", "timeout"}
SURVIVED = {"survived", "no tests"}


def main() -> int:
    out = subprocess.run(
        [".venv/bin/mutmut", "results", "--all", "true"], capture_output=True, text=True
    ).stdout
    per_module: dict[str, Counter[str]] = defaultdict(Counter)
    for line in out.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if "__mutmut_" not in name:
            continue
        module = name.split(".x_")[0].split(".xǁ")[0]
        per_module[module][status] += 1
    print(
        "| module | mutants | checked | killed | survived | score |\n|---|---:|---:|---:|---:|---:|"
    )
    for module, tally in sorted(per_module.items()):
        killed = sum(tally[s] for s in KILLED)
        survived = sum(tally[s] for s in SURVIVED)
        judged = killed + survived
        score = f"{killed / judged:.0%}" if judged else "-"
        total = sum(tally.values())
        print(f"| {module} | {total} | {judged} | {killed} | {survived} | {score} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
