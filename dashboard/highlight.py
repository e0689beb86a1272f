"""Search hits marked in their excerpts, on the server: each piece escaped, matches in <mark>."""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe


def highlight(text: str, terms: Sequence[str]) -> SafeString:
    """`text` escaped, with every word that starts with one of `terms` (the index stems words,
    so "herons" matches "heron") wrapped in <mark>. Matching ignores case."""
    words = sorted({t for t in terms if t}, key=len, reverse=True)
    if not words:
        return escape(text)
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\w*", re.IGNORECASE)
    parts: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        parts.append(escape(text[last : match.start()]))
        parts.append(f"<mark>{escape(match.group(0))}</mark>")
        last = match.end()
    parts.append(escape(text[last:]))
    return mark_safe("".join(parts))  # every piece escaped above
