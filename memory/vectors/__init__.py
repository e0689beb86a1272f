"""Vectors: how a body becomes a vector (embed, and the optional static and semantic models), and
how recall and cross-link find the nearest ones (the exact matrix for what is new or small, the
approximate index with its search and its store for the rest)."""
