"""An optional static embedding model in model2vec's format, read from a local directory.

Chosen with GROVE_EMBEDDER=memory.vectors.static.Model2VecEmbedder and GROVE_EMBEDDER_PATH=<dir>
(model.safetensors, tokenizer.json, config.json: what model2vec's save_pretrained writes). It
needs the optional `model2vec` extra (numpy, safetensors, tokenizers; no torch). Nothing is
ever downloaded: the path must be an existing directory (model2vec would otherwise ask the
Hugging Face hub for a repository of that name) and the hub is switched offline while loading.
A missing directory, a missing package or an unreadable model raises EmbedderRefused with the
reason; memory.vectors.embed then logs it and falls back to the hashing embedder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memory.vectors.embed import EmbedderRefused, environment, normalise

if TYPE_CHECKING:
    import numpy.typing as npt


class Model2VecEmbedder:
    """Mean of the model's token vectors (model2vec's encode), L2-normalised; a text with no
    token the model knows gets a direction seeded by the text, so no vector is zero. Its name
    carries a digest of the embedding file, so another model (or a replaced file) re-embeds."""

    def __init__(self, path: str = "") -> None:
        folder = Path(path) if path else None
        if folder is None or not folder.is_dir():
            raise EmbedderRefused(
                f"model2vec model directory {path!r} not found (GROVE_EMBEDDER_PATH must name a "
                "local directory; nothing is downloaded)"
            )
        try:
            from model2vec import StaticModel
        except ImportError:
            raise EmbedderRefused(
                "the model2vec package is not installed (extra: model2vec)"
            ) from None
        try:
            with environment("HF_HUB_OFFLINE", "1"):
                self._model = StaticModel.from_pretrained(folder, force_download=False)
                probe = np.asarray(self._model.encode(["probe"]), dtype=np.float32)
        except Exception as exc:  # a truncated file, bad JSON, a tokenizer it cannot read
            raise EmbedderRefused(
                f"model2vec model in {folder} unreadable ({type(exc).__name__}: {exc})"
            ) from None
        if probe.ndim != 2 or probe.shape[1] < 2 or not np.all(np.isfinite(probe)):
            raise EmbedderRefused(f"model2vec model in {folder} gives vectors of {probe.shape}")
        self.dim = int(probe.shape[1])
        digest = hashlib.sha256()
        for name in sorted(p.name for p in folder.glob("*.safetensors")):
            digest.update((folder / name).read_bytes())
        self.name = f"model2vec-{self.dim}-{digest.hexdigest()[:12]}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        texts = list(texts)
        dense = np.asarray(
            self._model.encode(texts, use_multiprocessing=False), dtype=np.float32
        ).reshape(len(texts), self.dim)
        for row in np.flatnonzero(~dense.any(axis=1)):
            seed = int.from_bytes(hashlib.sha256(texts[row].encode()).digest()[:8], "little")
            dense[row] = np.random.default_rng(seed).standard_normal(self.dim)
        return normalise(dense)
