"""The semantic bench's table: one row per (size, embedder) measured, e5 only up to its cap."""

from __future__ import annotations

import bench.semantic_bench as semantic


def _result(size: int, tag: str) -> dict:
    rate = {"per_s_wall": 10.0, "per_s_cpu": 20.0}
    return {
        "size": size, "embedder": tag, "p50": 1.0, "p95": 2.0, "cpu_p50": 1.0,
        "query_embed_p50": 0.5, "rate_synthetic": rate, "embedded": size, "embed_wall_s": 1.0,
        "embed_cpu_s": 1.0, "peak_rss_mb": 100.0, "vectors_bytes": 2**20, "index_bytes": 0,
        "load": 1.0,
    }  # fmt: skip


def test_e5_is_measured_up_to_its_cap_and_the_rest_is_said(monkeypatch):
    asked: list[tuple[int, str]] = []
    monkeypatch.setattr(semantic, "_run_child", lambda s, t: asked.append((s, t)) or _result(s, t))
    monkeypatch.setenv("GROVE_BENCH_E5_MAX", "10000")
    text = semantic.run([10_000, 100_000])
    assert asked == [(10_000, "hashing"), (10_000, "e5"), (100_000, "hashing")]
    assert "| 10,000 | e5 | 1.0 | 2.0 |" in text and "| 100,000 | e5 |" not in text
    assert "e5 at 100,000 not run" in text
    assert "| 500 | 10,000, 1 (1) |" in text  # 10k bodies at 20 a second of CPU: 500 s
