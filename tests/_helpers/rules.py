"""The visibility rules every path must apply (issue 16, STYLE.md item 22): the matrix checks them
on each path (tests/engine/test_visibility_matrix.py), MCP in one slow session of its own."""

from __future__ import annotations

RULES = ("domain", "as_of", "decayed", "sealed", "rejected", "superseded")
