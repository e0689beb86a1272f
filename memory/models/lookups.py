"""Lookups the models' constraints use (registered on import of memory.models)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from django.db import models
from django.db.models import Lookup

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.models.sql.compiler import SQLCompiler


@models.CharField.register_lookup
class Glob(Lookup):
    """SQLite GLOB, so CHECK constraints can hold without REGEXP (which raw connections lack)."""

    lookup_name = "glob"

    # Django takes the params as any sequence (this returns a list); its stub says a tuple.
    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper
    ) -> tuple[str, list[str | int]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} GLOB {rhs}", [*lhs_params, *rhs_params]

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper
    ) -> tuple[str, list[str | int]]:
        # PostgreSQL has no GLOB: the same pattern as an anchored POSIX regex (~ is
        # case-sensitive like GLOB). Patterns here are literals: [classes], * and ?.
        lhs, lhs_params = self.process_lhs(compiler, connection)
        return f"{lhs} ~ %s", [*lhs_params, glob_to_regex(str(self.rhs))]


def glob_to_regex(pattern: str) -> str:
    """An anchored POSIX regex matching what SQLite's GLOB `pattern` matches."""
    out, i = ["^"], 0
    while i < len(pattern):
        ch = pattern[i]
        end = pattern.find("]", i + 2) if ch == "[" else -1
        if end != -1:
            inner = pattern[i + 1 : end]
            out.append("[^" + inner[1:] + "]" if inner.startswith("^") else f"[{inner}]")
            i = end + 1
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return "".join(out) + "$"
