"""Hypothesis strategies for hostile input at every door (the fuzz in tests/agents/test_fuzz.py
and tests/dashboard/test_fuzz_forms.py): text with NUL, lone surrogates and other scripts'
digits, numbers that overflow or are booleans or floats, and JSON of the wrong shape."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Fixed seed, bounded cases: CI runs the same examples every time (GROVE_FUZZ_EXAMPLES raises it).
FUZZ = settings(
    max_examples=int(os.environ.get("GROVE_FUZZ_EXAMPLES", "60")),
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

NASTY = st.sampled_from(
    ["\x00", "x\x00y", "\ud800", "bad \udfff", "²", "٣", "99999999999999999999", "-1", "0",
     "1.5", "1e400", "true", "", " ", "#12", "9" * 30, "<script>", "%00"]
)  # fmt: skip
TEXT = st.one_of(
    NASTY,
    st.text(
        st.one_of(st.characters(), st.characters(categories=["Cs"]), st.just("\x00")), max_size=30
    ),
)
FORM_TEXT = st.one_of(NASTY, st.text(max_size=30))  # what a form or query string can carry
NUMBERS = st.one_of(
    st.booleans(),
    st.sampled_from([0, -1, 1, 2, 2**63, 2**64, 10**30, 1.0, 1.5, 1.9, -0.0]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)
SCALARS = st.one_of(st.none(), NUMBERS, TEXT)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=8,
)
