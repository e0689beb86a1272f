"""The database schema (memory/migrations/): invariants attacked with raw SQL, indexes and the
plans that use them, migration history, PostgreSQL's own forms."""
