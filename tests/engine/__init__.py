"""The engine's flat modules (memory/*.py): write, scrub, extract, cites, scroll, audit, chain,
visibility, trust, read, walk, authority, packets, questions, tokens, chunks."""
