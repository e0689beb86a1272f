"""The forgetting simulator's report (bench/forgetting_bench.py): the Markdown section, the
default threshold by RULE, and the chart (docs/bench/forgetting.svg: live share and net
recall@10 by month, one line per policy)."""

from __future__ import annotations

from pathlib import Path

from bench.forgetting_bench import (
    CLIPPINGS,
    INFERENCES,
    NEED_READ_BEFORE,
    NEED_RECENT,
    NEEDS,
    RECENT_DAYS,
    TURNS,
    VAULT_NOTES,
    Month,
    _age,
)

MAX_LIVE = 0.60  # the bound on live share of arrivals after 12 months
RULE = (
    "the default is the reachability threshold with the highest net recall@10 over months "
    f"1-12 among those with at most {MAX_LIVE:.0%} of arrivals live at the end of month 12; "
    "a tie (equal to three decimals) goes to the longer threshold, i.e. to remembering."
)
SVG = Path(__file__).resolve().parent.parent / "docs" / "bench" / "forgetting.svg"


def _chart(results: dict[str, list[Month]], arrived: list[int]) -> str:
    """Two panels, one line per policy: live share of arrivals, and net recall@10, by month."""
    colours = ["#777", "#d08c00", "#1f77b4", "#2ca02c", "#9467bd"]
    w, h, pad = 360, 220, 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w + 20}" height="{h + 70}" '
             'font-family="sans-serif" font-size="11">']  # fmt: skip
    for panel, (title, value) in enumerate(
        (
            ("live / arrived", lambda m, total: m.live / max(1, total)),
            ("net recall@10", lambda m, total: m.hits / max(1, m.needs)),
        )
    ):
        x0 = panel * (w + 20)
        parts.append(f'<text x="{x0 + pad}" y="14">{title} by month (0..1)</text>')
        parts.append(
            f'<rect x="{x0 + pad}" y="20" width="{w - pad}" height="{h - 40}" '
            'fill="none" stroke="#ccc"/>'
        )
        for name, colour in zip(results, colours, strict=False):
            months = results[name]
            pts = []
            for i, m in enumerate(months):
                x = x0 + pad + (w - pad) * (i + 0.5) / max(1, len(months))
                y = 20 + (h - 40) * (1 - value(m, arrived[i]))
                pts.append(f"{x:.1f},{y:.1f}")
            parts.append(
                f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                f'points="{" ".join(pts)}"/>'
            )
    for i, (name, colour) in enumerate(zip(results, colours, strict=False)):
        parts.append(
            f'<text x="{pad + i * 140}" y="{h + 20}" fill="{colour}">&#9632; {name}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def summary(results: dict[str, list[Month]]) -> list[str]:
    """Months 1-12 per policy (live share at month 12, regret, net recall@10, and net recall@10
    of months 10-12 alone), the default threshold by RULE, and whether it pays for itself."""
    rows, live_share, recall = [], {}, {}
    for policy, months in results.items():
        year, last = months[:12], months[9:12]
        total = sum(m.arrived for m in year)
        needs = sum(m.needs for m in year)
        regret, hits = sum(m.regret for m in year), sum(m.hits for m in year)
        live_share[policy] = year[-1].live / max(1, total)
        recall[policy] = round(hits / max(1, needs), 3)
        late = sum(m.hits for m in last) / max(1, sum(m.needs for m in last))
        rows.append(
            f"| {policy} | {live_share[policy]:.0%} | {regret}/{needs} "
            f"({regret / max(1, needs):.1%}) | {recall[policy]:.3f} | {late:.3f} | "
            f"{hits / max(1, needs - regret):.3f} |"
        )
    fit = [
        p
        for p in results
        if _age(p) is not None and live_share[p] <= MAX_LIVE and len(results[p]) >= 12
    ]
    pick = max(fit, key=lambda p: (recall[p], _age(p))) if fit else None
    keep = recall.get("keep everything")
    if pick is None:
        verdict = f"No threshold keeps live at or under {MAX_LIVE:.0%} after 12 months."
    elif keep is None:
        verdict = f"**Default threshold: {pick}.**"
    else:
        pays = "pays" if recall[pick] >= keep else "does not pay"
        verdict = (
            f"**Default threshold: {pick}.** At it forgetting {pays} for itself: net recall@10 "
            f"{recall[pick]:.3f} against keep-everything's {keep:.3f}, with "
            f"{live_share[pick]:.0%} of arrivals live after 12 months."
        )
    return [
        "| policy | live after 12 months | regret, months 1-12 | net recall@10, months 1-12 | "
        "net recall@10, months 10-12 | recall@10 of needs still live, months 1-12 |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"The rule, fixed before the run: {RULE}",
        "",
        verdict,
    ]


def report(
    results: dict[str, list[Month]],
    took: dict[str, float],
    *,
    days: int,
    scale: float,
    nightly: bool = True,
    svg: Path = SVG,
) -> str:
    """The Markdown section and the chart (`svg`) for `results`."""
    checks = "" if nightly else " (its read-only integrity checks at month ends instead)"
    arrived, total = [], 0
    for m in next(iter(results.values())):
        total += m.arrived
        arrived.append(total)
    svg.write_text(_chart(results, arrived))
    lines = [
        "## Forgetting",
        "",
        f"`bench/forgetting_bench.py`: {days} days at scale {scale} (per day "
        f"{TURNS * scale:g} turns, {CLIPPINGS * scale:g} clippings, {INFERENCES * scale:g} "
        f"inferences, {VAULT_NOTES * scale:g} vault notes, {NEEDS * scale:g} needs: "
        f"{NEED_RECENT:.0%} from the last {RECENT_DAYS} days, {NEED_READ_BEFORE:.0%} older and "
        "read before, the rest older and never read), real write path, recall, read and a "
        f"nightly run_sleep{checks}, "
        "one fresh database per policy. Per 30-day month: arrived (nodes "
        "written this month, the vault's file imports included), live / decayed / permanent "
        "(at its end; live also as a share of all arrivals so far), regret (needs whose node "
        "had decayed), net recall@10 (needs whose node was live and in the top 10), protected "
        "decayed (read nodes decayed, plus the integrity checks root_decayed and "
        "live_node_holds_decayed_node; must be 0), integrity (violations of all of sleep's "
        "integrity checks, full hash chain included, at the month's end; must be 0).",
        "",
        f"![live share and net recall@10 by month](bench/{svg.name})",
        "",
        "| policy | month | arrived | live | decayed | permanent | regret | net recall@10 | "
        "protected decayed | integrity |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for policy, months in results.items():
        for i, m in enumerate(months):
            lines.append(
                f"| {policy} | {i + 1} | {m.arrived} | {m.live} ({m.live / max(1, arrived[i]):.0%})"
                f" | {m.decayed} | {m.permanent} | {m.regret}/{m.needs} | "
                f"{m.hits / max(1, m.needs):.2f} | {m.protected_decayed} | {m.integrity} |"
            )
    lines += ["", *summary(results), ""]
    lines.append("Seconds per policy: " + ", ".join(f"{p} {t:.0f}" for p, t in took.items()) + ".")
    return "\n".join(lines)
