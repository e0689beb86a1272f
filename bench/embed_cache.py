"""Embeddings remembered across bench runs: a model that embeds a hundred passages a second
(e5) would spend most of a LoCoMo run re-embedding the same 2,888 turns and 760 questions.

`cached()` wraps the configured embedder's `embed` and `embed_query` for the duration: each text
is looked up by a hash of (model name, query or passage, text) in a file under the bench's data
directory (never in the repository), and only the texts not found are embedded. The vectors are
the model's own, so a run with the cache scores what a run without it would.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def _key(model: str, kind: str, text: str) -> str:
    return hashlib.sha256(f"{model}\0{kind}\0{text}".encode()).hexdigest()


def _path(model: str) -> Path:
    from bench.synthetic import bench_dir

    return bench_dir() / f"embeddings-{model}.pickle"


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """The configured embedder's vectors read from (and added to) the bench's cache file."""
    from memory.vectors.embed import configured_embedder

    embedder: Any = configured_embedder()
    path = _path(embedder.name)
    known: dict[str, np.ndarray] = pickle.loads(path.read_bytes()) if path.exists() else {}
    size = len(known)
    embed, embed_query = embedder.embed, getattr(embedder, "embed_query", None)

    def cached_embed(texts: Sequence[str]) -> np.ndarray:
        keys = [_key(embedder.name, "passage", t) for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in known]
        if missing:
            for i, row in zip(missing, embed([texts[i] for i in missing]), strict=True):
                known[keys[i]] = np.asarray(row, dtype=np.float32)
        if not keys:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        return np.stack([known[k] for k in keys])

    def cached_query(text: str) -> np.ndarray:
        key = _key(embedder.name, "query", text)
        if key not in known:
            known[key] = np.asarray(embed_query(text), dtype=np.float32)  # type: ignore[misc]
        return known[key]

    embedder.embed = cached_embed
    if embed_query is not None:
        embedder.embed_query = cached_query
    try:
        yield
    finally:
        embedder.embed = embed
        if embed_query is not None:
            embedder.embed_query = embed_query
        if len(known) > size:
            path.write_bytes(pickle.dumps(known))
