"""Custody: proof that what is stored is what arrived. The integrity checks (one module, as they
are one idea), their incremental run in sleep, the hash chain's verification, the schema gate,
drift of imported files, and export/import, which verifies a memory before it is taken in."""
