"""The benches (bench/): the doc they write, the held-out reranker, the forgetting simulator."""
