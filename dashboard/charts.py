"""Small charts drawn on the server as inline SVG: no JavaScript, readable without CSS."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe


def _svg(template: str, *args: object) -> str:
    """format_html with floats rounded to one decimal (format_html escapes every argument, so
    format specs cannot be used inside the template)."""
    return format_html(template, *(f"{a:.1f}" if isinstance(a, float) else a for a in args))


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


def daily_bars(
    *,
    days: Sequence[date],
    series: Sequence[tuple[str, str, Sequence[int]]],
    title: str,
    width: int = 900,
    height: int = 240,
) -> SafeString:
    """Grouped bars per day for each (label, css colour, counts) series, with a y axis, a date
    axis every ~2 weeks, a legend, <title> and aria-label. format_html escapes every text."""
    left, right, top, bottom = 44, 12, 28, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = _nice_max(max((max(values, default=0) for _, _, values in series), default=0))
    slot = plot_w / max(len(days), 1)
    bar_w = max(slot / (len(series) + 0.6), 0.8)
    parts: list[str] = [
        _svg(
            '<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}" '
            'xmlns="http://www.w3.org/2000/svg"><title>{}</title>',
            width,
            height,
            title,
            title,
        )
    ]
    for tick in range(5):
        value = peak * tick / 4
        y = top + plot_h - plot_h * tick / 4
        parts.append(
            _svg(
                '<line x1="{}" x2="{}" y1="{}" y2="{}" class="grid"/>'
                '<text x="{}" y="{}" class="ylab" text-anchor="end">{}</text>',
                left,
                width - right,
                y,
                y,
                left - 6,
                y + 4,
                f"{value:g}",
            )
        )
    for i, day in enumerate(days):
        x0 = left + i * slot + (slot - bar_w * len(series)) / 2
        for j, (label, colour, values) in enumerate(series):
            count = values[i]
            if not count:
                continue
            h = plot_h * count / peak
            parts.append(
                _svg(
                    '<rect x="{}" y="{}" width="{}" height="{}" fill="{}">'
                    "<title>{} {}: {}</title></rect>",
                    x0 + j * bar_w,
                    top + plot_h - h,
                    bar_w,
                    h,
                    colour,
                    day.isoformat(),
                    label,
                    count,
                )
            )
        if (i % 14 == 0 and len(days) - 1 - i >= 7) or i == len(days) - 1:
            parts.append(
                _svg(
                    '<text x="{}" y="{}" class="xlab" text-anchor="{}">{}</text>',
                    left + i * slot + slot / 2,
                    height - bottom + 16,
                    "end" if i == len(days) - 1 else "middle",
                    day.strftime("%b %d"),
                )
            )
    parts.append(
        _svg(
            '<line x1="{}" x2="{}" y1="{}" y2="{}" class="axis"/>',
            left,
            width - right,
            top + plot_h,
            top + plot_h,
        )
    )
    x = left
    for label, colour, values in series:
        parts.append(
            _svg(
                '<rect x="{}" y="8" width="12" height="12" fill="{}"/>'
                '<text x="{}" y="18" class="legend">{} ({})</text>',
                x,
                colour,
                x + 16,
                label,
                sum(values),
            )
        )
        x += 16 + 9 * (len(label) + 8)
    parts.append("</svg>")
    return mark_safe("".join(str(p) for p in parts))  # each part escaped by format_html
