"""A semantic model fitted by sleep on the owner's own text: TF-IDF + TruncatedSVD (LSA).

No download and no torch: scikit-learn fits it on the live nodes' bodies (a sample of at most
FIT_SAMPLE of them), and it is kept in the data dir as one .npz of plain arrays (vocabulary,
idf, components; never a pickle). Behind the Embedder interface (memory.vectors.embed): once a valid
model exists, it is the embedder recall reads; until then, or when the file is missing, corrupt
or does not fit the vectors stored under its name, recall falls back to the hashing embedder
and the next sleep rebuilds the model (a warning says why, never a crash).

Rebuilt after enough new text: when the live nodes outnumber those it was fitted on by
REFIT_GROWTH (and by at least REFIT_MIN_NEW). A new model has a new name, so every node is
re-embedded under it before it is published; vectors of retired models are then removed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings

if TYPE_CHECKING:
    import numpy.typing as npt

logger = logging.getLogger(__name__)

PREFIX = "lsa-"
DIM = 128
FIT_SAMPLE = 20_000  # documents the fit reads: enough for a vocabulary, fast at 100k nodes
MAX_FEATURES = 50_000
REFIT_GROWTH = 1.25
REFIT_MIN_NEW = 200
MIN_DOCS = 50  # below this there is nothing to learn word co-occurrence from
_TOKENS = r"(?u)\b\w+\b"


class ModelRefused(ValueError):
    """The stored model cannot be used (unreadable, inconsistent, or of another dimension)."""


def model_path() -> Path:
    return Path(settings.GROVE_MODEL_DIR) / "semantic.npz"


class SemanticEmbedder:
    """LSA vectors: sublinear tf-idf over the fitted vocabulary, projected on the SVD's
    components, L2-normalised; a text with no known word gets a direction seeded by the text."""

    def __init__(
        self,
        *,
        vocabulary: Sequence[str],
        idf: npt.NDArray[np.floating[Any]],
        components: npt.NDArray[np.floating[Any]],
        meta: dict[str, Any],
    ) -> None:
        from sklearn.feature_extraction.text import CountVectorizer

        _check(vocabulary, idf, components, meta)
        self.dim = int(components.shape[0])
        self.meta = meta
        digest = hashlib.sha256(components[:, : min(64, components.shape[1])].tobytes())
        digest.update("\n".join(vocabulary).encode())
        self.name = f"{PREFIX}{self.dim}-{digest.hexdigest()[:12]}"
        self._idf = idf.astype(np.float32)
        self._components_t = np.ascontiguousarray(components.T, dtype=np.float32)
        self._counter = CountVectorizer(
            vocabulary={w: i for i, w in enumerate(vocabulary)},
            token_pattern=_TOKENS,
            strip_accents="unicode",
            lowercase=True,
        )

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        from sklearn.preprocessing import normalize

        texts = list(texts)
        counts = self._counter.transform(texts).astype(np.float32)
        counts.data = 1.0 + np.log(counts.data)
        weighted = normalize(counts.multiply(self._idf).tocsr())
        dense = np.asarray(weighted @ self._components_t, dtype=np.float32)
        for row in np.flatnonzero(np.linalg.norm(dense, axis=1) < 1e-6):
            seed = int.from_bytes(hashlib.sha256(texts[row].encode()).digest()[:8], "little")
            dense[row] = np.random.default_rng(seed).standard_normal(self.dim)
        norms = np.linalg.norm(dense, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (dense / norms).astype(np.float32)
        return unit


def _check(
    vocabulary: Sequence[str],
    idf: npt.NDArray[np.floating[Any]],
    components: npt.NDArray[np.floating[Any]],
    meta: dict[str, Any],
) -> None:
    if components.ndim != 2 or not 2 <= components.shape[0] <= 1024:
        raise ModelRefused(f"components have shape {components.shape}, not (dim, vocabulary)")
    if meta.get("dim", components.shape[0]) != components.shape[0]:
        raise ModelRefused(
            f"wrong dimension: the model says {meta['dim']}, its components make "
            f"{components.shape[0]}"
        )
    if components.shape[1] != len(vocabulary) or idf.shape != (len(vocabulary),):
        raise ModelRefused(
            f"vocabulary of {len(vocabulary)} words but components {components.shape} and "
            f"idf {idf.shape}"
        )
    if not (np.all(np.isfinite(components)) and np.all(np.isfinite(idf))):
        raise ModelRefused("the model holds non-finite numbers")


# --- fitting and storing -----------------------------------------------------------------


def fit(texts: Sequence[str], *, fitted_on: int, through_id: int, seed: int = 0) -> Any:
    """A model fitted on `texts` (sleep passes a sample of the live bodies)."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(
        token_pattern=_TOKENS,
        strip_accents="unicode",
        sublinear_tf=True,
        min_df=2,
        max_df=0.5,
        max_features=MAX_FEATURES,
        dtype=np.float32,
    )
    matrix = vectorizer.fit_transform(texts)
    dim = max(2, min(DIM, matrix.shape[1] - 1, matrix.shape[0] - 1))
    svd = TruncatedSVD(n_components=dim, random_state=seed, algorithm="randomized", n_iter=4)
    svd.fit(matrix)
    vocabulary = vectorizer.get_feature_names_out().tolist()
    meta = {"fitted_on": fitted_on, "through_id": through_id, "docs": len(texts), "dim": dim}
    return SemanticEmbedder(
        vocabulary=vocabulary,
        idf=vectorizer.idf_.astype(np.float32),
        components=svd.components_.astype(np.float32),
        meta=meta,
    )


def save(model: SemanticEmbedder, path: Path | None = None) -> Path:
    """Write the model beside the database, atomically (a reader sees the old or the new)."""
    path = path or model_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npz")
    vocabulary = np.array(list(model._counter.vocabulary), dtype=np.str_)
    np.savez(
        partial,
        vocabulary=vocabulary,
        idf=model._idf,
        components=model._components_t.T,
        meta=np.array(json.dumps(model.meta)),
    )
    os.replace(partial, path)
    return path


def load(path: Path | None = None) -> SemanticEmbedder:
    """The stored model; ModelRefused (with the reason) if it cannot be used."""
    path = path or model_path()
    try:
        with np.load(path, allow_pickle=False) as data:
            vocabulary = data["vocabulary"].tolist()
            idf, components = data["idf"], data["components"]
            meta = json.loads(str(data["meta"]))
    except FileNotFoundError:
        raise
    except Exception as exc:  # a truncated zip, a missing array, bad JSON: all one answer
        raise ModelRefused(f"unreadable ({type(exc).__name__}: {exc})") from None
    return SemanticEmbedder(vocabulary=vocabulary, idf=idf, components=components, meta=meta)


def check_vectors(model: SemanticEmbedder) -> None:
    """Refuse a model whose name is on stored vectors of another dimension (a file replaced
    by hand, a clash of names): they cannot be compared with what it makes."""
    from memory.models import Vector

    other = (
        Vector.objects.filter(model=model.name)
        .exclude(dim=model.dim)
        .values_list("dim", flat=True)
        .first()
    )
    if other is not None:
        raise ModelRefused(
            f"wrong dimension: vectors stored under {model.name} have {other} dimensions, the "
            f"model makes {model.dim}"
        )


# --- the current model, cached per process ---------------------------------------------------

_lock = threading.Lock()
_current: dict[str, Any] = {"stamp": None, "model": None}


def current() -> SemanticEmbedder | None:
    """The published model if there is a usable one, else None (recall then uses hashing).
    Reloaded when the file changes (sleep publishes a new one by renaming it into place)."""
    if not settings.GROVE_SEMANTIC_MODEL:
        return None
    path = model_path()
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    stamp = (str(path), stat.st_mtime_ns, stat.st_size)
    with _lock:
        if _current["stamp"] != stamp:
            _current["stamp"], _current["model"] = stamp, None
            try:
                model = load(path)
                check_vectors(model)
                _current["model"] = model
            except (ModelRefused, FileNotFoundError) as exc:
                logger.warning(
                    "semantic model %s refused: %s; recall uses the hashing embedder until "
                    "sleep rebuilds it",
                    path,
                    exc,
                )
        held: SemanticEmbedder | None = _current["model"]
        return held


def forget() -> None:
    """Drop the cached model (tests; after removing the file)."""
    with _lock:
        _current["stamp"], _current["model"] = None, None
