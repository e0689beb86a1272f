"""Vectors (memory/vectors/): embedders, the semantic model, the matrix and its float16 pass, the
vector index."""
