"""Entities: the names, dates and quantities a node's body mentions, found without a model.

A deterministic extractor (no download, no model; the same text always gives the same rows):
- names: runs of capitalised words ("Eiffel Tower", "LGBTQ", "Caroline"), function words
  trimmed from their ends; a lone capitalised word opening a sentence is skipped ("Wow",
  "Thanks" open sentences as often as names do), a run of two or more is kept;
- dates: a month with its day and/or year ("7 May 2023", "May 2023"), a weekday, a year
  1900-2099;
- quantities: a number with a unit ("4 years", "$300", "10 km", "3 kids").
Each becomes a Mention row (node, entity key, kind): sleep's `entities` step writes them for
new nodes (memory/sleep/run.py), the node page lists them, and recall expands from its best
hits through the entities they share with other nodes (memory.recall.rank._entity_expand).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from django.db import connection, transaction

from memory.models import Mention, MentionKind, Node
from memory.recall.lexical import STOPWORDS
from memory.visibility import Visibility

MAX_KEY = 100  # the column's length; a longer run is not a name
MAX_PER_NODE = 20  # a list of names is not twenty facts about each
MAX_LOOKUPS = 40  # entities one recall follows: bounds its statement (SQLite compound limit)
MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH_ABBR = {m[:3]: m for m in MONTHS} | {"sept": "september"}
_MONTH_WORDS = frozenset([*MONTHS, *_MONTH_ABBR])
WEEKDAYS = frozenset(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])
# Capitalised words that open and close sentences and address people without naming anything.
_NOT_NAMES = frozenset(
    """i im ive id ill hey hi hello wow thanks thank yeah yes no ok okay oh ah aw lol omg sure
    great good nice cool awesome sounds sorry congrats congratulations haha please dear mr mrs
    ms dr""".split()  # noqa: SIM905 (a word list reads better as text)
)
_RELATIVE = frozenset(["last", "next", "this", "yep", "yup", "nope", "well", "so", "anyway"])
UNITS = {
    "%": "percent",
    "percent": "percent",
    "km": "km",
    "kilometers": "km",
    "kilometres": "km",
    "mile": "miles",
    "miles": "miles",
    "kg": "kg",
    "lb": "lbs",
    "lbs": "lbs",
    "pounds": "lbs",
    "hour": "hours",
    "hours": "hours",
    "minute": "minutes",
    "minutes": "minutes",
    "day": "days",
    "days": "days",
    "week": "weeks",
    "weeks": "weeks",
    "month": "months",
    "months": "months",
    "year": "years",
    "years": "years",
    "dollar": "dollars",
    "dollars": "dollars",
    "euro": "euros",
    "euros": "euros",
    "kid": "kids",
    "kids": "kids",
    "child": "children",
    "children": "children",
    "dog": "dogs",
    "dogs": "dogs",
    "cat": "cats",
    "cats": "cats",
}
_SENTENCE = re.compile(r"[^.!?\n]+")
# Typographic apostrophes are words' own, as in "Caroline\u2019s".
_TOKEN = re.compile(r"[\w][\w'’&-]*", re.UNICODE)  # noqa: RUF001
_NUMBER = r"\d+(?:[.,]\d+)?"
_QUANTITY = re.compile(
    rf"(?<![\w.])(?:\$\s?(?P<money>{_NUMBER})|(?P<n>{_NUMBER})\s?(?P<unit>%|[a-z]+)\b)", re.I
)
# Month names spelled out (or their usual abbreviations) as an alternation: a regex that tried
# every word as a possible month cost 0.2 ms a node, most of sleep's entity step.
_MONTH = r"(?:" + "|".join([*MONTHS, *_MONTH_ABBR]) + r")"
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b\.?,?(?:\s+(\d{{4}}))?", re.I
)
_MONTH_DAY = re.compile(
    rf"\b({_MONTH})\b\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b,?(?:\s+(\d{{4}}))?", re.I
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\b\.?,?\s+(\d{{4}})\b", re.I)
_YEAR = re.compile(r"\b([a-z]+)\.?,?\s+(\d{4})\b", re.I)
_YEAR = re.compile(r"(?<![\d$.,])\b(19\d\d|20\d\d)\b(?![.,]?\d)")


def extract(text: str) -> list[tuple[str, str]]:
    """(entity key, kind) pairs the text mentions, in order, de-duplicated, at most
    MAX_PER_NODE. Keys are casefolded and NFKC-normalised, so "Paris" and "PARIS" meet."""
    text = unicodedata.normalize("NFKC", text or "")
    # Tokenised once (sleep reads every new node: at 100k nodes each 0.1 ms is 10 s).
    sentences = [_TOKEN.findall(sentence) for sentence in _SENTENCE.findall(text)]
    words = [w.casefold().rstrip(".") for tokens in sentences for w in tokens]
    digits = any(ch.isdigit() for ch in text)
    found: list[tuple[str, str]] = []
    found += [(key, MentionKind.DATE) for key in _dates(text, words, digits=digits)]
    if digits:
        found += [(key, MentionKind.QUANTITY) for key in _quantities(text)]
    found += [(key, MentionKind.NAME) for key in _names(sentences)]
    seen: dict[str, str] = {}
    for key, kind in found:
        if 1 < len(key) <= MAX_KEY and key not in seen:
            seen[key] = kind
    return list(seen.items())[:MAX_PER_NODE]


def _month(word: str) -> str | None:
    word = word.casefold()
    if word in MONTHS:
        return word
    return _MONTH_ABBR.get(word)


def _dates(text: str, words: list[str], *, digits: bool) -> list[str]:
    keys = [w for w in words if w in WEEKDAYS]
    if not digits:
        return keys
    keys += _YEAR.findall(text)
    # The month patterns only where a month is named (one scan of words, not three regexes).
    if not any(w in _MONTH_WORDS for w in words):
        return keys
    for day, month, year in _DAY_MONTH.findall(text):
        if (m := _month(month)) and 1 <= int(day) <= 31:
            keys.append(f"{int(day)} {m}" + (f" {year}" if year else ""))
    for month, day, year in _MONTH_DAY.findall(text):
        # "may 5" is a date; "may 5 people" would be too, rarely: a capital M is asked of May.
        if (m := _month(month)) and 1 <= int(day) <= 31 and (m != "may" or month[0] == "M"):
            keys.append(f"{int(day)} {m}" + (f" {year}" if year else ""))
    for month, year in _MONTH_YEAR.findall(text):
        if m := _month(month):
            keys.append(f"{m} {year}")
    return keys


def _quantities(text: str) -> list[str]:
    keys = []
    for match in _QUANTITY.finditer(text):
        if match.group("money"):
            keys.append(f"{match.group('money').replace(',', '')} dollars")
        elif (unit := UNITS.get(match.group("unit").casefold())) is not None:
            keys.append(f"{match.group('n').replace(',', '')} {unit}")
    return keys


def _capitalised(token: str) -> bool:
    return token[0].isupper() and not token.isdigit()


def _names(sentences: list[list[str]]) -> list[str]:
    keys = []
    for tokens in sentences:
        run: list[str] = []
        start = 0
        for i, token in enumerate([*tokens, ""]):
            if token and _capitalised(token):
                if not run:
                    start = i
                run.append(token)
                continue
            if run:
                keys += _name_of(run, sentence_start=start == 0)
            run = []
    return keys


def _name_of(run: list[str], *, sentence_start: bool) -> list[str]:
    words = [re.sub(r"['’]s$", "", w) for w in run]  # noqa: RUF001 -- either apostrophe
    # Function words and greetings at either end are not part of the name ("The Louvre").
    while words and (_common(words[0]) or (sentence_start and _opener(words[0]))):
        words, sentence_start = words[1:], False
    while words and _common(words[-1]):
        words = words[:-1]
    if not words or (sentence_start and len(words) == 1):
        return []
    key = " ".join(w.casefold() for w in words)
    if key in WEEKDAYS or _month(key) or words[0].casefold() in _RELATIVE:
        return []
    return [key]


def _common(word: str) -> bool:
    folded = word.casefold()
    bare = folded.replace("'", "").replace("’", "")  # noqa: RUF001 -- either apostrophe
    return (
        folded in STOPWORDS
        or bare in _NOT_NAMES
        or bare in STOPWORDS
        or folded.isdigit()
        or (bare.startswith("i") and bare[1:] in {"m", "ve", "ll", "d"})
    )


def _opener(word: str) -> bool:
    """A sentence's capitalised first word that is rarely a name: an adverb (Definitely,
    Lately), a relative day (Last, Next), or a common word."""
    folded = word.casefold()
    return _common(word) or folded.endswith("ly") or folded in _RELATIVE


# --- sleep's step ----------------------------------------------------------------------------


def record_mentions(*, after_id: int, limit: int | None, batch: int = 2000) -> dict[str, Any]:
    """Mentions for nodes with an id above `after_id` (oldest first), each batch in its own
    transaction; returns {"count": nodes read, "mentions": rows written, "through_id"}. A
    node's rows are derived from its immutable body, so redoing a batch writes nothing new."""
    through, nodes, written = after_id, 0, 0
    while limit is None or nodes < limit:
        size = batch if limit is None else min(batch, limit - nodes)
        rows = list(
            Node.objects.filter(pk__gt=through).order_by("pk").values_list("pk", "body")[:size]
        )
        if not rows:
            break
        mentions = [
            Mention(node_id=pk, entity=key, kind=kind)
            for pk, body in rows
            for key, kind in extract(body)
        ]
        with transaction.atomic():
            Mention.objects.bulk_create(mentions, ignore_conflicts=True)
        through, nodes, written = rows[-1][0], nodes + len(rows), written + len(mentions)
    return {"count": nodes, "mentions": written, "through_id": through}


def mentions_of(node_ids: Sequence[int]) -> dict[int, list[str]]:
    """node id -> the entity keys its body mentions (for pages that show them)."""
    found: dict[int, list[str]] = {}
    if not node_ids:
        return found
    marks = ",".join(["%s"] * len(node_ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT node_id, entity FROM memory_mention WHERE node_id IN ({marks}) ORDER BY id",
            list(node_ids),
        )
        for node_id, entity in cursor.fetchall():
            found.setdefault(node_id, []).append(entity)
    return found


def shared(seeds: Sequence[int], vis: Visibility, *, cap: int) -> dict[int, list[tuple[int, str]]]:
    """Seed -> the other nodes (and the entity) that name an entity the seed names, among the
    nodes the caller may see (vis.sql: domains, scope, created by as_of, not decayed now);
    liveness as of T and trust are the caller's to judge (memory.recall.rank). An entity named by
    more than `cap` visible nodes is a hub (a speaker's name, a year), not evidence: skipped, and
    its rows stop being read at cap + 1."""
    if not seeds:
        return {}
    marks = ",".join(["%s"] * len(seeds))
    named: dict[str, list[int]] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT node_id, entity FROM memory_mention WHERE node_id IN ({marks})", list(seeds)
        )
        for node_id, entity in cursor.fetchall():
            named.setdefault(entity, []).append(node_id)
        if not named:
            return {}
        # The best seeds' entities first (seeds come best first), at most MAX_LOOKUPS of them.
        order = {seed: i for i, seed in enumerate(seeds)}
        entities = sorted(named, key=lambda e: (min(order[s] for s in named[e]), e))
        entities = entities[:MAX_LOOKUPS]
        where, params = vis.sql("n")
        # CROSS JOIN keeps SQLite on the entity's index first (PostgreSQL has no CROSS JOIN ...
        # ON, and needs no hint); each entity reads at most cap + 1 rows.
        join = "JOIN" if connection.vendor == "postgresql" else "CROSS JOIN"
        one = (
            f"SELECT * FROM (SELECT m.entity, m.node_id FROM memory_mention m {join} memory_node "
            f"n ON n.id = m.node_id WHERE m.entity = %s AND {where} LIMIT %s) AS e{{i}}"
        )
        sql = " UNION ALL ".join(one.format(i=i) for i in range(len(entities)))
        cursor.execute(sql, [x for e in entities for x in (e, *params, cap + 1)])
        holders: dict[str, list[int]] = {}
        for entity, node_id in cursor.fetchall():
            holders.setdefault(entity, []).append(node_id)
    found: dict[int, list[tuple[int, str]]] = {}
    for entity, nodes in holders.items():
        if len(nodes) > cap:
            continue
        for seed in named[entity]:
            found.setdefault(seed, []).extend((n, entity) for n in nodes if n != seed)
    return found
