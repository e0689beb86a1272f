"""Template hygiene: Django's {# #} comments end at the line's end, so a comment that wraps is
shown to the owner as text. Every template's comments stay on one line (or use {% comment %})."""

from __future__ import annotations

from pathlib import Path

from tests._helpers import ROOT

TEMPLATES = ROOT / "templates"


def wrapped_comments(root: Path = TEMPLATES) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.html")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "{#" in line and "#}" not in line.split("{#", 1)[1]:
                found.append(f"{path.relative_to(root)}:{number}")
    return found


def test_no_template_comment_wraps_onto_a_second_line():
    assert wrapped_comments() == []


def test_a_wrapped_comment_is_caught(tmp_path):
    (tmp_path / "page.html").write_text("{# one line #}\n{# two\nlines #}\n")
    assert wrapped_comments(tmp_path) == ["page.html:2"]
