"""Embeddings behind one small interface.

The default, HashingEmbedder, needs no download and no fitting: scikit-learn's HashingVectorizer
(word unigrams + bigrams) projected to a dense space by a fixed-seed sparse random
projection, which preserves cosine similarity in expectation (Achlioptas). Another embedder is
chosen with the GROVE_EMBEDDER setting: a dotted path to a class taking `path` (a local model
directory in GROVE_EMBEDDER_PATH, never downloaded) with `name`, `dim` and `embed` as below;
memory.vectors.static.Model2VecEmbedder reads a model2vec static model that way, and
memory.vectors.e5.E5Embedder the e5 model a package ships (no path). An embedder trained with
separate query and passage forms (e5) also has `embed_query`; recall embeds its query through
embed_query() below, everything else (bodies) through `embed`. A configured
embedder that cannot load (EmbedderRefused: a missing or corrupt model) is logged and replaced
by the hashing embedder, never a crash.
Switching models re-embeds: vectors are keyed by model name and only the current model is read.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import scipy.sparse
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from memory.chunks import chunks
from memory.models import Event, Node

if TYPE_CHECKING:
    import numpy.typing as npt

logger = logging.getLogger(__name__)


@contextmanager
def environment(name: str, value: str) -> Iterator[None]:
    """The body run with `name` set to `value` in the environment, then put back as it was
    (unset when it was unset): a model's loader reads it once, and nothing after it should."""
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


class EmbedderRefused(RuntimeError):
    """A configured embedder cannot be used (its model is missing, unreadable or unfit)."""


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Return float32 vectors of shape (len(texts), dim), L2-normalised, never zero."""
        ...


def embed_query(embedder: Embedder, text: str) -> npt.NDArray[np.float32]:
    """`text` as a recall query: the embedder's own query form when it has one (e5's "query: "),
    else the same vector a body gets. Shape (dim,)."""
    own: Callable[[str], npt.NDArray[np.float32]] | None = getattr(embedder, "embed_query", None)
    if own is not None:
        return own(text)
    vector: npt.NDArray[np.float32] = embedder.embed([text])[0]
    return vector


def batch_size(embedder: Embedder, default: int) -> int:
    """Bodies per embedding batch: a slow model (e5) asks for fewer, so progress is reported
    and a sleep run beats between batches."""
    return min(default, int(getattr(embedder, "batch", default)))


class HashingEmbedder:
    dim = 256

    def __init__(self, path: str = "") -> None:
        from sklearn.feature_extraction import FeatureHasher
        from sklearn.feature_extraction.text import HashingVectorizer
        from sklearn.utils.sparsefuncs_fast import inplace_csr_row_normalize_l2

        self.n_features = 2**18
        self.name = f"hashing-w12-{self.n_features}-srp{self.dim}-k16-v2"
        self._vectorizer = HashingVectorizer(
            n_features=self.n_features,
            ngram_range=(1, 2),
            alternate_sign=False,
            norm="l2",
            strip_accents="unicode",
            token_pattern=r"(?u)\b\w+\b",  # one-letter words count: "A." is not empty
        )
        # A sparse random projection (Achlioptas): every feature is sent to 16 of the 256
        # dimensions with random signs. Drawn from a fixed seed, so every process gets the same
        # vectors and nothing is learned from data; 16 per feature means no text with a word
        # projects to zero (sklearn's default density, 1/sqrt(n), often left a lone word empty).
        per_feature = 16
        rng = np.random.default_rng(20241130)
        columns = rng.integers(0, self.dim, size=(self.n_features, per_feature))
        signs = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=columns.shape)
        self._components = scipy.sparse.csr_matrix(
            (signs.ravel(), columns.ravel(), np.arange(0, columns.size + 1, per_feature)),
            shape=(self.n_features, self.dim),
            dtype=np.float32,
        )
        # The vectorizer's own parts, built once: its transform rebuilt them and re-validated its
        # input on every call, two thirds of embedding one query (0.36 -> 0.12 ms).
        self._analyzer = self._vectorizer.build_analyzer()
        self._hasher = FeatureHasher(
            n_features=self.n_features,
            input_type="string",
            dtype=self._vectorizer.dtype,
            alternate_sign=False,
        )
        self._normalise_rows = inplace_csr_row_normalize_l2

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        texts = list(texts)
        # What HashingVectorizer.transform computes (norm="l2": sklearn's normalize runs this
        # in-place row normalisation), without its per-call rebuilding and validation.
        counts = self._hasher.transform(self._analyzer(text) for text in texts)
        self._normalise_rows(counts)
        sparse = counts.astype(np.float32)
        dense = (sparse @ self._components).toarray().astype(np.float32)
        for row in np.flatnonzero(~dense.any(axis=1)):
            # No word at all (only punctuation or symbols): a direction drawn from the text
            # itself, so equal texts agree and different ones are near-orthogonal.
            seed = int.from_bytes(hashlib.sha256(texts[row].encode()).digest()[:8], "little")
            dense[row] = np.random.default_rng(seed).standard_normal(self.dim)
        return normalise(dense)


# The cosines at which two texts count as alike, as the hashing embedder's vectors measure
# them: sleep's similar edge (crosslink), the triage's "like #N" (near_duplicate) and
# consolidation's merge (consolidate). They mean nothing across models: e5's vectors of
# unrelated texts sit near 0.84, so every pair would pass hashing's 0.6. An embedder names its
# own in a `cosines` mapping; a GROVE_* setting the owner gives wins over both.
COSINES = {"crosslink": 0.6, "near_duplicate": 0.8, "consolidate": 0.92}
_COSINE_SETTINGS = {
    "crosslink": "GROVE_CROSSLINK_MIN_COSINE",
    "near_duplicate": "GROVE_NEAR_DUPLICATE_COSINE",
    "consolidate": "GROVE_CONSOLIDATE_MIN_COSINE",
}


def cosine_floor(kind: str) -> float:
    """The cosine from which two texts are alike for `kind` (a key of COSINES), under the
    configured embedder: the owner's setting, else the embedder's own, else hashing's."""
    chosen = getattr(settings, _COSINE_SETTINGS[kind])
    if chosen is not None:
        return float(chosen)
    own: dict[str, float] = getattr(get_embedder(), "cosines", {})
    return float(own.get(kind, COSINES[kind]))


def normalise(matrix: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: npt.NDArray[np.float32] = (matrix / norms).astype(np.float32)
    return unit


@functools.cache
def configured_embedder() -> Embedder:
    """The configured embedder (GROVE_EMBEDDER, GROVE_EMBEDDER_PATH), built once per process."""
    cls = import_string(settings.GROVE_EMBEDDER)
    try:
        embedder: Embedder = cls(path=settings.GROVE_EMBEDDER_PATH)
        return embedder
    except EmbedderRefused as exc:
        logger.warning(
            "embedder %s refused: %s; recall uses the hashing embedder",
            settings.GROVE_EMBEDDER,
            exc,
        )
        return HashingEmbedder()


def get_embedder() -> Embedder:
    """The embedder vectors are made and searched with: the semantic model sleep fitted on the
    owner's text (memory.vectors.semantic) once a usable one exists and no other embedder was
    configured; otherwise the configured one (hashing by default)."""
    from memory.vectors.semantic import current

    base = configured_embedder()
    if isinstance(base, HashingEmbedder) and (fitted := current()) is not None:
        return fitted
    return base


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes | memoryview, dim: int) -> npt.NDArray[np.float32]:
    return np.frombuffer(blob, dtype="<f4", count=dim)


@dataclass(frozen=True)
class Since:
    """Where a complete earlier run left off: every live node up to `through_id` had its vector
    then; a node since revived or restored (at or after `started`) may lack one."""

    through_id: int
    started: datetime


def embed_missing(
    *,
    limit: int | None = None,
    batch: int = 512,
    embedder: Embedder | None = None,
    since: Since | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed live nodes that have no vector for the current model (or `embedder`, a model not
    yet published), in batches of `batch`, each batch in its own transaction. Store clock order
    (oldest first). Returns how many were made. With `since`, only nodes above its mark and
    nodes revived or restored since are looked at (no anti-join over the whole graph).

    One query lists what is missing (ids only); bodies are then read a batch at a time and the
    vectors written with one INSERT per batch, so the work grows with the nodes embedded (not
    with a re-scan of the graph per batch) and only one batch of bodies is in memory. Nodes
    that arrive meanwhile are found by the next listing. `progress(made, listed)` is called
    after each batch (listed: the nodes found missing so far, made: embedded so far)."""
    embedder = embedder or get_embedder()
    batch = batch_size(embedder, batch)
    made = listed = 0
    while limit is None or made < limit:
        ids = missing_ids(embedder.name, limit=None if limit is None else limit - made, since=since)
        if len(ids) == 0:
            break
        listed = made + len(ids)
        for start in range(0, len(ids), batch):
            made += _embed_batch(embedder, ids[start : start + batch])
            if progress is not None:
                progress(made, listed)
    return made


def missing_ids(
    model: str, *, limit: int | None = None, since: Since | None = None
) -> npt.NDArray[np.int64]:
    """Ids of live nodes without a `model` vector, oldest first (store clock, then id)."""
    missing = Node.objects.filter(decayed_at__isnull=True).exclude(vectors__model=model)
    if since is not None:
        # The nodes brought back since are read first and looked up by id: as a subquery,
        # SQLite (no statistics) walked every live node up to the mark to test each against
        # it (1M: 0.38 s a sleep).
        back = sorted(
            set(
                Event.objects.filter(kind__in=["restored", "revived"], at__gte=since.started)
                .exclude(node_id__gt=since.through_id)
                .values_list("node_id", flat=True)
            )
            - {None}
        )
        found = list(missing.filter(pk__gt=since.through_id).values_list("created_at", "id"))
        for chunk in chunks(back):
            found += missing.filter(pk__in=chunk).values_list("created_at", "id")
        found.sort()
        return np.array([node_id for _, node_id in found[:limit]], dtype=np.int64)
    listing = missing.order_by("created_at", "id").values_list("id", flat=True)
    return np.fromiter(listing[:limit] if limit is not None else listing.iterator(), np.int64)


_INSERT = (
    "INSERT INTO memory_vector (node_id, model, dim, data, created_at) "
    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
)


def _embed_batch(embedder: Embedder, ids: npt.NDArray[np.int64]) -> int:
    """Embed and store the nodes `ids` that are still live; returns how many."""
    wanted = [int(i) for i in ids]
    order = {node_id: k for k, node_id in enumerate(wanted)}
    with connection.cursor() as cursor:
        rows: list[tuple[int, str]] = []
        for chunk in chunks(wanted):
            cursor.execute(
                f"SELECT id, body FROM memory_node WHERE decayed_at IS NULL AND id IN "
                f"({','.join(['%s'] * len(chunk))})",
                chunk,
            )
            rows += cursor.fetchall()
    if not rows:
        return 0
    rows.sort(key=lambda row: order[row[0]])
    matrix = embedder.embed([body for _, body in rows])
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    params = [
        (node_id, embedder.name, embedder.dim, to_blob(vector), now)
        for (node_id, _), vector in zip(rows, matrix, strict=True)
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(_INSERT, params)
    return len(rows)
