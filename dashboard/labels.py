"""Short titles for nodes: what a list row or a graph node is called when there is no room for
its body. Sealed and rejected nodes get no title from their words (they are never shown)."""

from __future__ import annotations

import re
from collections import Counter
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


def _words(body: str) -> list[str]:
    return _MARKUP.sub(" ", plain_text(body[:400])).split()


def distinct_titles(titles: dict[int, str], heads: dict[int, str]) -> dict[int, str]:
    """Titles no two of which read alike on one picture: where short titles collide, each takes
    the words where its body first parts from the others' ("… in Alvalade" / "… in Campo de"),
    and where the words never part (one body the start of another, or twins), its id."""
    groups: dict[str, list[int]] = {}
    for node_id, title in titles.items():
        groups.setdefault(title, []).append(node_id)
    out = dict(titles)
    for title, ids in groups.items():
        if len(ids) < 2:  # sealed and rejected titles carry their id: never here
            continue
        words = {i: _words(heads.get(i, "")) for i in ids}
        for i in ids:
            mine = words[i]
            parts = max(_common(mine, words[j]) for j in ids if j != i)
            if parts >= len(mine):
                out[i] = _cut(f"{title} #{i}", TITLE_CHARS + 8)
                continue
            start = max(0, parts - 2)
            lead = "… " if start else ""
            out[i] = _cut(lead + " ".join(mine[start : parts + 2]))
    if len(set(out.values())) < len(out):  # still alike after the cut: the id decides
        seen = Counter(out.values())
        out = {i: f"{t} #{i}" if seen[t] > 1 else t for i, t in out.items()}
    return out


def _common(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
