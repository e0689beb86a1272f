"""Vectors made by hand: a cached matrix of given rows, and a node placed at an angle."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np

from memory.models import Node, Vector
from memory.vectors.embed import get_embedder, to_blob
from memory.vectors.matrix import Matrix, _append

START = datetime(2025, 1, 1, tzinfo=UTC)


def matrix_of(vectors: np.ndarray) -> Matrix:
    """A cached matrix holding these rows: node id = row + 1, domains a/b/c, every third row
    wild, one row an hour from START. (Filled through the matrix's own append, as a read of the
    vector table fills it.)"""
    n, dim = vectors.shape
    matrix = Matrix(key=("test", "test"), dim=dim)
    matrix.vectors = np.zeros((0, dim), dtype=np.float32)
    rows = [
        (i + 1, i + 1, "x", to_blob(vectors[i]), "abc"[i % 3], "wild" if i % 3 == 0 else "home",
         (START + timedelta(hours=i)).isoformat())
        for i in range(n)
    ]  # fmt: skip
    _append(matrix, rows)
    return matrix


def place(node: Node, degrees: float) -> Node:
    """Give a node a hand-made unit vector at `degrees` in the first plane of the model."""
    dim = get_embedder().dim
    vector = np.zeros(dim, dtype=np.float32)
    vector[0], vector[1] = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    Vector.objects.create(node=node, model=get_embedder().name, dim=dim, data=to_blob(vector))
    return node


def embed_one(node: Node) -> None:
    """A vector for this node only, by the configured embedder (embed_missing would embed the
    root note too)."""
    embedder = get_embedder()
    vector = embedder.embed([node.body])[0]
    Vector.objects.create(node=node, model=embedder.name, dim=embedder.dim, data=to_blob(vector))
