"""Short titles for nodes: what a list row or a graph node is called when there is no room for
its body. Sealed and rejected nodes get no title from their words (they are never shown)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from memory.visibility import HIDDEN_TRUST

TITLE_CHARS = 28
TITLE_WORDS = 5
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+)$", re.MULTILINE)
_MARKUP = re.compile(r"[*_`>#\[\]]+")
_FILE = re.compile(r"\.(md|markdown|txt|org|json)$", re.IGNORECASE)


def _cut(text: str, limit: int = TITLE_CHARS) -> str:
    """At most `limit` characters, cut at a word boundary when one is not too far back."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space >= limit // 2 else head).rstrip(" ,.;:") + "…"


_MARKS = re.compile(r"^\s{0,3}#{1,6}\s+|\*\*|__|`|\[\[|\]\]", re.MULTILINE)


def plain_text(body: str) -> str:
    """A body's start without the commonest markdown marks (heading hashes, bold, code ticks,
    wikilink brackets), for one-line previews; the words themselves are untouched."""
    return _MARKS.sub("", body)


def short_title(body: str, *, source: str = "", node_id: int, trust: str = "") -> str:
    """A few words naming the node: "sealed #12" for hidden trust; else the first markdown
    heading, else the file name of a file source (its #section kept), else the first words."""
    if trust in HIDDEN_TRUST:
        return f"{trust} #{node_id}"
    heading = _HEADING.search(body[:400]) if "#" in body[:400] else None
    if heading:
        return _cut(_MARKUP.sub("", heading.group(1)))
    path, _, section = source.partition("#")
    if path and ("/" in path or _FILE.search(path)):
        name = _FILE.sub("", PurePosixPath(path).name)
        return _cut(f"{name} › {section}" if section else name)  # noqa: RUF001 -- a path separator on the page
    words = _MARKUP.sub(" ", body[:300]).split()
    return _cut(" ".join(words[:TITLE_WORDS])) or f"#{node_id}"
