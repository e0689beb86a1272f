"""Both palettes keep text readable: WCAG AA contrast (4.5:1) for the pairs pages use."""

from __future__ import annotations

import re

import pytest

from tests._helpers import ROOT

CSS = (ROOT / "static" / "grove" / "grove.css").read_text()
PAIRS = [
    ("fg", "bg"), ("fg", "card"), ("muted", "bg"), ("muted", "card"), ("accent", "bg"),
    ("accent", "card"), ("on-accent", "accent"), ("fg", "ok-bg"), ("fg", "warn-bg"),
    ("fg", "danger-bg"), ("fg", "info-bg"), ("fg", "note-bg"), ("fg", "tag-bg"),
    ("muted", "row-tint"), ("danger", "card"), ("header-link", "header-bg"), ("fg", "mark-bg"),
]  # fmt: skip


def _palettes() -> dict[str, tuple[str, str]]:
    root = CSS[CSS.index(":root {") : CSS.index("}", CSS.index(":root {"))]
    colours = {}
    for name, value in re.findall(r"--([a-z-]+):\s*([^;]+);", root):
        pair = re.fullmatch(r"light-dark\((#[0-9a-f]+),\s*(#[0-9a-f]+)\)", value.strip())
        colours[name] = pair.groups() if pair else (value.strip(), value.strip())
    return colours


def _luminance(hex_colour: str) -> float:
    digits = hex_colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    channels = [int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _ratio(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("theme", [0, 1], ids=["light", "dark"])
@pytest.mark.parametrize(("text", "background"), PAIRS)
def test_text_keeps_aa_contrast_in_both_themes(text, background, theme):
    colours = _palettes()
    assert _ratio(colours[text][theme], colours[background][theme]) >= 4.5
