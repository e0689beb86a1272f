"""Reranking: recall's last ordering step, a linear model over cheap signals of each of the
POOL best candidates (memory.recall.rank), learned from questions whose evidence is known.

The signals are what ranking already knows about a candidate (its fused score and place, the
lists it came from, the edge that brought it, whether its signer is named, its length, and how
it sits beside the best hits: same parent, turns away; the names, dates and quantities sleep
found in it); nothing is read for them but the candidates' parents and mentions, and, for a
model fitted with MEANING, each candidate's stored vector. The model
is a logistic regression whose coefficients are a file (MODEL_PATH, plain JSON: feature
names, scaling, coefficients; or one fitted for the embedder in use, model_path); the bench fits it
(`python -m bench.locomo_rerank --fit`) on the LoCoMo dev questions, which makes its
coefficients tunables chosen on dev, like memory.recall.rank.Weights (docs/recall.md says so and how
the held-out figure keeps it honest). Without a usable file (missing, unreadable, features that
are not these) recall keeps the fused order and a warning says why, never a crash; so it does
with the setting GROVE_RERANK off.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings

if TYPE_CHECKING:
    import numpy.typing as npt

logger = logging.getLogger(__name__)

MODEL_PATH = Path(__file__).resolve().parent / "rerank.json"
# The best hits a candidate is placed against (session_top, near_top).
TOP = 10
NEAR = 3
FEATURES = (
    "score",  # fused score (after recency and the signer boost) over the pool's best
    "reciprocal",  # 1 / (1 + place in the fused order)
    "words",  # the word list's score over its best (0 when not in it)
    "unnamed",  # the word list without a named speaker, over its best
    "vector",  # cosine, when in the vector list
    "date",  # in the date list
    "neighbour",  # reached over one peer edge from a seed
    "further",  # reached two or more replies away
    "signer",  # its signer is named in the query
    "other_speaker",  # the query names a speaker, and this node's signer is someone else
    "length",  # the body's characters, up to the excerpt's 240, over 240
    "asks",  # the body (its excerpt) ends with a question mark: it asks more than it tells
    "tells",  # first-person words (I, my, we...) per word of the excerpt: it tells of its signer
    "early",  # 1 / (1 + ids after its parent's): a session's or file's first nodes carry news
    "session_top",  # share of the fused top TOP sharing this node's parent
    "near_top",  # 1 / (1 + id distance to the nearest of the top NEAR in the same parent)
    # names it mentions (memory.recall.entities) other than the pool's signers, up to NAMES
    "names",
    "specifics",  # dates and quantities it mentions, up to SPECIFICS
)
# A model fitted for a trained embedder (e5) also reads its cosine of the query to every
# candidate of the pool (memory.vectors.likeness), not only to those the vector list ranked:
# what a turn means, beside what it says, and what it means with the turn it answers. Their
# coefficients are fitted on that model's cosines, so they live in a file named for the
# embedder (model_path), never applied to another's.
MEANING = (
    "meaning",
    # its cosine in context (with the turn it answers: likeness.in_context), less the pool's
    # best: a reply's meaning beside the other candidates'
    "context",
)
# Mentions counted before they stop adding (set by reading, not searched: docs/recall.md).
NAMES = 3
SPECIFICS = 2


class ModelRefused(ValueError):
    """The reranker's file cannot be used (unreadable, or not for these features)."""


@dataclass
class Signals:
    """What rank knows about its pool, by node id."""

    words: dict[int, float] = field(default_factory=dict)
    unnamed: dict[int, float] = field(default_factory=dict)
    vector: dict[int, float] = field(default_factory=dict)
    date: dict[int, float] = field(default_factory=dict)
    via: dict[int, tuple[int, str]] = field(default_factory=dict)
    signer: set[int] = field(default_factory=set)
    named: bool = False
    bodies: dict[int, str] = field(default_factory=dict)  # the excerpts rank read
    parents: dict[int, int] = field(default_factory=dict)
    mentions: dict[int, str] = field(default_factory=dict)  # "kind:entity" lines (sleep's rows)
    speakers: frozenset[str] = frozenset()  # the pool's signers, casefolded
    meaning: dict[int, float] | None = None  # cosine to the query, when a model reads MEANING
    context: dict[int, float] | None = None  # the same in context (likeness.in_context)


@dataclass(frozen=True)
class Model:
    mean: npt.NDArray[np.float64]
    scale: npt.NDArray[np.float64]
    coefficients: npt.NDArray[np.float64]

    @property
    def meaning(self) -> bool:
        """Whether it reads the MEANING column after FEATURES."""
        return len(self.coefficients) == len(FEATURES) + len(MEANING)

    def score(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        scores: npt.NDArray[np.float64] = ((x - self.mean) / self.scale) @ self.coefficients
        return scores


# First-person words, counted by substring on the casefolded excerpt with its commas, stops and
# exclamation marks made spaces: a proxy (" i i " counts once) at a quarter of a tokenizer's cost.
_FIRST_PERSON = (" i ", " i'", " me ", " my ", " we ", " we'", " us ", " our ")


def _first_person(body: str) -> float:
    """First-person words per word (spaces) of `body`."""
    text = " " + body.casefold().replace(",", " ").replace(".", " ").replace("!", " ") + " "
    return sum(map(text.count, _FIRST_PERSON)) / text.count(" ")


# The features of the excerpt alone (length, asks, tells), kept by excerpt in rows of one array:
# computing them was half the features' cost, and the same nodes come back across queries (56%
# of a 10k bench's pools); a row per pool read back by one fancy index.
_BODY_ROWS = np.empty((8192, 3), dtype=np.float64)
_body_row: dict[str, int] = {}
_body_lock = threading.Lock()


def _body_features(body: str) -> tuple[float, float, float]:
    return min(len(body), 240) / 240, float(body.rstrip().endswith("?")), _first_person(body)


def _of_bodies(bodies: list[str]) -> npt.NDArray[np.float64]:
    if len(bodies) > len(_BODY_ROWS):  # a pool larger than the store: no keeping
        return np.array([_body_features(b) for b in bodies], dtype=np.float64)
    with _body_lock:
        rows: list[Any] = list(map(_body_row.get, bodies))
        if None in rows:
            if len(_body_row) + len(bodies) > len(_BODY_ROWS):
                _body_row.clear()  # full: start again, this pool's rows made anew
                rows = [None] * len(bodies)
            new: list[str] = []
            for r, body in enumerate(bodies):
                if rows[r] is None:
                    row = _body_row.get(body)
                    if row is None:  # (a body twice in one pool is made once)
                        row = _body_row[body] = len(_body_row)
                        new.append(body)
                    rows[r] = row
            if new:  # the last rows, in order: one assignment for all of them
                _BODY_ROWS[len(_body_row) - len(new) : len(_body_row)] = list(
                    map(_body_features, new)
                )
        return _BODY_ROWS[rows]


def signals(
    rows: dict[int, dict[str, Any]],
    *,
    words: Sequence[tuple[int, float]],
    unnamed: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    date: Sequence[tuple[int, float]],
    via: dict[int, tuple[int, str]],
    signer: set[int],
    named: bool,
    meaning: dict[int, float] | None = None,
    context: dict[int, float] | None = None,
) -> Signals:
    """Signals from rank's lists and its pool's preview rows (read with their parents)."""
    return Signals(
        words=dict(words), unnamed=dict(unnamed), vector=dict(vector), date=dict(date), via=via,
        signer=signer, named=named, bodies={i: r["body"] for i, r in rows.items()},
        parents={i: r["parent"] for i, r in rows.items() if r.get("parent") is not None},
        mentions={i: r["mentions"] for i, r in rows.items() if r.get("mentions")},
        speakers=frozenset(str(r["signature"]).casefold() for r in rows.values()),
        meaning=meaning, context=context,
    )  # fmt: skip


def _column(ordered: Sequence[int], values: dict[int, float], n: int) -> np.ndarray:
    return np.fromiter(map(values.get, ordered, repeat(0.0)), dtype=np.float64, count=n)


def _share(ordered: Sequence[int], hits: dict[int, float], n: int) -> np.ndarray:
    """Each node's score in `hits` over the best (0 when absent, or when none is positive)."""
    top = max(hits.values(), default=0.0)
    return _column(ordered, hits, n) / top if top > 0 else np.zeros(n)


def _member(ordered: Sequence[int], among: Any, n: int) -> np.ndarray:
    return np.fromiter(map(among.__contains__, ordered), dtype=np.float64, count=n)


def _mentioned(lines: str | None, speakers: frozenset[str]) -> tuple[float, float]:
    """(names other than `speakers`, dates and quantities) among a node's mention lines, each
    capped: a turn that names things tells news; one naming only its listener greets."""
    if not lines:
        return 0.0, 0.0
    names = other = 0
    for line in lines.split("\n"):
        kind, _, entity = line.partition(":")
        if kind == "name":
            names += entity not in speakers
        else:
            other += 1
    return min(names, NAMES) / NAMES, min(other, SPECIFICS) / SPECIFICS


def features(
    ordered: Sequence[int], scores: dict[int, float], s: Signals
) -> npt.NDArray[np.float64]:
    """One row of FEATURES (and MEANING, when the signals carry it) per node of `ordered` (the
    fused order, best first), built a column at a time into one array (a Python row per
    candidate cost a tenth of a 10k recall; tests/recall/test_rerank.py holds them equal to a
    row-at-a-time reference)."""
    n = len(ordered)
    width = len(FEATURES) + (len(MEANING) if s.meaning is not None else 0)
    x = np.empty((n, width), dtype=np.float64)
    if not n:
        return x
    ids = np.fromiter(ordered, dtype=np.int64, count=n)
    score = _column(ordered, scores, n)
    parent = np.fromiter(map(s.parents.get, ordered, repeat(-1)), dtype=np.int64, count=n)
    has_parent = parent >= 0
    # Place beside the best hits: the top TOP's parents, the nearest of the top NEAR by id.
    top = parent[:TOP][has_parent[:TOP]]
    k = min(NEAR, n)
    same = (parent[:, None] == parent[None, :k]) & has_parent[None, :k]
    for r in range(k):
        same[r, r] = False
    near = np.where(same, np.abs(ids[:, None] - ids[None, :k]), np.inf).min(axis=1)
    via = s.via
    how = [via[i][1] if i in via else "" for i in ordered]
    further = np.fromiter(("turns" in h for h in how), dtype=np.float64, count=n)
    signer = _member(ordered, s.signer, n)
    x[:, 0] = score / (score[0] or 1.0)
    x[:, 1] = 1.0 / (1 + np.arange(n))
    x[:, 2] = _share(ordered, s.words, n)
    x[:, 3] = _share(ordered, s.unnamed, n)
    x[:, 4] = _column(ordered, s.vector, n)
    x[:, 5] = _member(ordered, s.date, n)
    x[:, 6] = np.fromiter(map(bool, how), dtype=np.float64, count=n) - further
    x[:, 7] = further
    x[:, 8] = signer
    x[:, 9] = (1.0 - signer) if s.named else 0.0
    x[:, 10:13] = _of_bodies(list(map(s.bodies.get, ordered, repeat(""))))
    x[:, 13] = np.where(has_parent, 1.0 / (1 + np.maximum(ids - parent, 0)), 0.0)
    x[:, 14] = (parent[:, None] == top[None, :]).sum(axis=1) / TOP * has_parent
    x[:, 15] = np.where(np.isfinite(near), 1.0 / (1 + near), 0.0)
    mentions, speakers = s.mentions, s.speakers
    x[:, 16:18] = [_mentioned(mentions.get(i), speakers) for i in ordered]
    if s.meaning is not None:  # a node with no vector yet (not slept) reads 0, like no mention
        x[:, 18:20] = _meanings(ordered, s.meaning, s.context or {}, n)
    return x


def _meanings(
    ordered: Sequence[int], meaning: dict[int, float], context: dict[int, float], n: int
) -> npt.NDArray[np.float64]:
    """The MEANING columns: the cosine, and the cosine in context less the pool's best."""
    in_context = _column(ordered, context, n)
    return np.column_stack([_column(ordered, meaning, n), in_context - in_context.max()])


# --- the model in use ----------------------------------------------------------------------

_lock = threading.Lock()
_models: dict[str, Model | None] = {}  # by embedder name
_override: list[Model | None] = []
_observers: list[tuple[Callable[[list[int], np.ndarray], None], bool]] = []


def model_path(embedder: str) -> Path:
    """The file recall's reranker is read from under `embedder` (its name): one fitted for that
    model when the bench wrote one (rerank-<name>.json, with MEANING), else MODEL_PATH."""
    own = MODEL_PATH.with_name(f"rerank-{embedder}.json")
    return own if own.exists() else MODEL_PATH


def load(path: Path | None = None) -> Model:
    """The model in `path` (MODEL_PATH); ModelRefused (with the reason) if it cannot be used."""
    path = path or MODEL_PATH
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        names = list(data["features"])
        mean, scale, coef = (
            np.asarray(data[k], dtype=np.float64) for k in ("mean", "scale", "coefficients")
        )
    except FileNotFoundError:
        raise
    except Exception as exc:  # bad JSON, a missing key, a non-number: one answer
        raise ModelRefused(f"unreadable ({type(exc).__name__}: {exc})") from None
    if names not in (list(FEATURES), [*FEATURES, *MEANING]):
        raise ModelRefused(f"fitted on features {names}, recall computes {list(FEATURES)}")
    n = len(names)
    if not (mean.shape == scale.shape == coef.shape == (n,)):
        raise ModelRefused(f"expected {n} numbers each in mean, scale and coefficients")
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(coef)) and np.all(scale > 0)):
        raise ModelRefused("non-finite numbers, or a scale that is not positive")
    return Model(mean=mean, scale=scale, coefficients=coef)


def current() -> Model | None:
    """The model recall uses: an override (the bench, tests), else the file for the embedder
    in use (model_path), loaded once per process and embedder; None (the fused order) when it
    is missing or refused."""
    if _override:
        return _override[-1]
    if not settings.GROVE_RERANK:
        return None
    from memory.vectors.embed import get_embedder

    embedder = get_embedder().name
    with _lock:
        if embedder not in _models:
            path = model_path(embedder)
            _models[embedder] = None
            try:
                _models[embedder] = load(path)
            except (ModelRefused, FileNotFoundError) as exc:
                logger.warning("reranker %s refused: %s; recall keeps the fused order", path, exc)
        return _models[embedder]


def forget() -> None:
    """Load the files again on next use (tests)."""
    with _lock:
        _models.clear()


@contextlib.contextmanager
def using(model: Model | None) -> Iterator[None]:
    """Rerank with `model` (None: the fused order) for the duration."""
    _override.append(model)
    try:
        yield
    finally:
        _override.pop()


@contextlib.contextmanager
def observing(
    observer: Callable[[list[int], np.ndarray], None], *, meaning: bool = False
) -> Iterator[None]:
    """Call `observer(ordered, features)` for every pool ranked (the bench's fitting); with
    `meaning`, the features carry the MEANING column."""
    entry = (observer, meaning)
    _observers.append(entry)
    try:
        yield
    finally:
        _observers.remove(entry)


def wanted() -> bool:
    """Whether rank should compute the signals (a model or an observer wants them)."""
    return bool(_observers) or current() is not None


def wants_meaning() -> bool:
    """Whether rank should read the pool's cosines to the query (MEANING)."""
    if any(meaning for _, meaning in _observers):
        return True
    model = current()
    return model is not None and model.meaning


def reorder(ordered: list[int], scores: dict[int, float], signals: Signals) -> list[int]:
    """`ordered` by the model's score (ties: the fused order); unchanged without a model."""
    model = current()
    if len(ordered) <= 1 or (model is None and not _observers):
        return ordered
    x = features(ordered, scores, signals)
    for observer, _ in _observers:
        observer(list(ordered), x)
    if model is None:
        return ordered
    if model.meaning != (x.shape[1] > len(FEATURES)):  # (rank reads what wants_meaning says)
        x = _width(x, signals, ordered, model.meaning)
    score = model.score(x)
    # A stable sort of the negated scores: ties keep the fused order.
    return [ordered[r] for r in np.argsort(-score, kind="stable").tolist()]


def _width(
    x: npt.NDArray[np.float64], signals: Signals, ordered: Sequence[int], meaning: bool
) -> npt.NDArray[np.float64]:
    """`x` with the MEANING column the model reads (its cosines, or 0 when none were read), or
    without the one it does not."""
    if not meaning:
        return x[:, : len(FEATURES)]
    columns = _meanings(ordered, signals.meaning or {}, signals.context or {}, len(ordered))
    return np.column_stack([x[:, : len(FEATURES)], columns])
