"""Custody (memory/custody/): integrity checks, the hash chain's verification, drift, the schema
gate, moving a memory; custody attacked with raw SQL and kept on every path."""
