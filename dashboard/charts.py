"""Small charts drawn on the server as SVG: the maths here, the markup in the overview's
`chart` partial. No JavaScript; readable without CSS; every bar carries its day and count."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe


def _f(value: float) -> str:
    """A coordinate as SVG text, one decimal (formatted here: template filters cost ~0.05 ms a
    call, and a 90-day chart has hundreds of numbers)."""
    return f"{value:.1f}"


def _nice_max(value: int) -> int:
    """A round ceiling for the y axis (1, 2, 5 x 10^k)."""
    if value <= 0:
        return 1
    step = 1
    while True:
        for mult in (1, 2, 5):
            if step * mult >= value:
                return step * mult
        step *= 10


def _legend(series: Sequence[tuple[str, str, Sequence[int]]], *, left: int) -> list[dict[str, Any]]:
    """One swatch and label per series, left to right, each label with its total."""
    legend: list[dict[str, Any]] = []
    x = left
    for label, colour, values in series:
        legend.append(
            {
                "x": x,
                "tx": x + 16,
                "fill": colour,
                "text": f"{label} ({sum(values)})",
                "series": len(legend),
            }
        )
        x += 16 + 9 * (len(label) + 8)
    return legend


def bar_geometry(
    *,
    days: Sequence[date],
    series: Sequence[tuple[str, str, Sequence[int]]],
    width: int = 900,
    height: int = 240,
) -> dict[str, Any]:
    """Every day its own slot with a bar per series (a day with nothing keeps its empty slot),
    y grid lines, a date tick each Monday, the count printed above a bar when it stands out
    (the day's peak and at least a fifth of the axis). Colours come from the stylesheet
    (series classes s0, s1), so both themes can pick them."""
    left, right, top, bottom = 44, 12, 28, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = _nice_max(max((max(values, default=0) for _, _, values in series), default=0))
    slot = plot_w / max(len(days), 1)
    gap = min(2.0, slot * 0.25)
    bar_w = max((slot - gap) / max(len(series), 1), 0.5)
    base = top + plot_h
    bars, ticks = [], []
    for i, day in enumerate(days):
        x0 = left + i * slot + gap / 2
        for j, (label, _, values) in enumerate(series):
            count = values[i]
            if not count:
                continue  # the slot stays: days keep their places on the axis
            h = plot_h * count / peak
            x, y = x0 + j * bar_w, base - h
            show = count / peak >= 0.2 and count == max(v[i] for _, _, v in series)
            bars.append(
                {"x": f"{x:.2f}", "y": _f(y), "w": f"{bar_w:.2f}", "h": _f(h), "series": j,
                 "tip": f"{day.isoformat()}: {count} {label}", "label": count if show else "",
                 "lx": _f(x + bar_w / 2), "ly": _f(y - 3)}
            )  # fmt: skip
        if day.weekday() == 0:
            x = left + i * slot + slot / 2
            anchor = "end" if x > width - right - 24 else "middle"
            ticks.append({"x": _f(x), "text": day.strftime("%b %d"), "anchor": anchor})
    grid = [
        {"y": _f(top + plot_h - plot_h * k / 4), "value": f"{peak * k / 4:g}"} for k in range(5)
    ]
    table = [(day, [values[i] for _, _, values in series]) for i, day in enumerate(days)]
    return {
        "width": width, "height": height, "left": left, "right": width - right, "base": _f(base),
        "ylab_x": left - 6,
        "label_y": height - bottom + 16, "bars": bars, "ticks": ticks, "grid": grid,
        "legend": _legend(series, left=left),
        "rows": [r for r in table if any(r[1])],
        "names": [label for label, _, _ in series],
    }  # fmt: skip


def daily_bars(
    *,
    days: Sequence[date],
    series: Sequence[tuple[str, str, Sequence[int]]],
    title: str,
    width: int = 900,
    height: int = 240,
) -> SafeString:
    """Bars per day for each (label, css colour, counts) series, with a y axis, a date tick
    each Monday, a legend, <title> and aria-label; the template escapes every text."""
    chart = bar_geometry(days=days, series=series, width=width, height=height)
    html = render_to_string("dashboard/overview.html#chart", {"c": chart, "title": title})
    return mark_safe(html)  # rendered by the template engine, autoescaped
