"""A guard on memory_apitoken: a token's identity (id, name, hash, prefix, when it was minted)
never changes; what the owner governs after minting (domains, read-only, mute, auto-decline, the
write limit) changes only right after the grant event that records it (the newest event on the
chain is a token_granted for this token: memory/tokens.change_token writes it first); and
revocation is one way and once. The grant events on the chain
(0024) let integrity and import name a row edited behind the app; this refuses the edit itself,
on both engines, as the node and event guards do.

What the app writes (memory/tokens.py): an INSERT when minting (and import's bulk insert),
revoked_at set once from NULL (revoke_token's conditional UPDATE), the governed fields after
their grant (change_token), and last_used_at and the write window, refreshed on use: those
change freely. Nothing deletes a token.

SQLite: REPLACE deletes a conflicting row without firing DELETE triggers (0005_custody), so an
insert colliding with an existing id, name or hash is refused before it happens (the unique
constraints would refuse a plain INSERT anyway; REPLACE would take the old row's place).
PostgreSQL has no REPLACE; its UPSERT is an UPDATE and meets the update guard; TRUNCATE fires no
row trigger and gets the statement guard the record's tables have (0013, 0022: only a test
flush in a test_ database passes it).
"""

from django.db import migrations

GRANT_COLUMNS = ["id", "name", "token_hash", "prefix", "created_at"]
GOVERNED = ["domains", "read_only", "muted", "auto_decline", "write_limit"]
UPDATE_MESSAGE = (
    "memory_apitoken_grant_immutable: a token's grant never changes, and it is revoked once"
)
DELETE_MESSAGE = "memory_apitoken_no_delete: tokens are revoked, never deleted"
REPLACE_MESSAGE = "memory_apitoken_no_replace: an existing token is never replaced"
TRUNCATE_MESSAGE = "memory_apitoken_no_truncate: tokens are revoked, never deleted"


def _fixed(distinct: str) -> str:
    columns = " OR ".join(f"NEW.{c} {distinct} OLD.{c}" for c in GRANT_COLUMNS)
    return f"{columns} OR (OLD.revoked_at IS NOT NULL AND NEW.revoked_at {distinct} OLD.revoked_at)"


def _governed(distinct: str) -> str:
    return " OR ".join(f"NEW.{c} {distinct} OLD.{c}" for c in GOVERNED)


# The newest event on the chain is this token's grant naming the new values: written in the
# same transaction, under the write lock, just before the row changes.
SQLITE_GRANTED = """COALESCE((SELECT kind = 'token_granted'
    AND CAST(json_extract(detail, '$.token') AS INTEGER) = NEW.id
    AND json_extract(detail, '$.domains') = json(NEW.domains)
    AND json_extract(detail, '$.read_only') = NEW.read_only
    AND json_extract(detail, '$.muted') = NEW.muted
    AND json_extract(detail, '$.auto_decline') = NEW.auto_decline
    AND json_extract(detail, '$.write_limit') = NEW.write_limit
    FROM memory_event ORDER BY id DESC LIMIT 1), 0)"""
# A PostgreSQL trigger's WHEN takes no subquery: the chain's tail is read in a function.
POSTGRESQL_GOVERNED_FUNCTION = """
    CREATE OR REPLACE FUNCTION grove_apitoken_governed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF COALESCE((SELECT kind = 'token_granted' AND (detail->>'token')::bigint = NEW.id
                     AND detail->'domains' = to_jsonb(NEW.domains)
                     AND (detail->>'read_only')::boolean = NEW.read_only
                     AND (detail->>'muted')::boolean = NEW.muted
                     AND (detail->>'auto_decline')::boolean = NEW.auto_decline
                     AND (detail->>'write_limit')::bigint = NEW.write_limit
                     FROM memory_event ORDER BY id DESC LIMIT 1), FALSE) THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'integrity_constraint_violation';
    END $$
    """


def _quoted(message: str) -> str:
    return message.replace("'", "''")


SQLITE = [
    f"""
    CREATE TRIGGER memory_apitoken_grant_immutable BEFORE UPDATE ON memory_apitoken
    WHEN {_fixed("IS NOT")}
    BEGIN SELECT RAISE(ABORT, '{_quoted(UPDATE_MESSAGE)}'); END
    """,
    f"""
    CREATE TRIGGER memory_apitoken_governed_after_grant BEFORE UPDATE ON memory_apitoken
    WHEN ({_governed("IS NOT")}) AND NOT {SQLITE_GRANTED}
    BEGIN SELECT RAISE(ABORT, '{_quoted(UPDATE_MESSAGE)}'); END
    """,
    f"""
    CREATE TRIGGER memory_apitoken_no_delete BEFORE DELETE ON memory_apitoken
    BEGIN SELECT RAISE(ABORT, '{_quoted(DELETE_MESSAGE)}'); END
    """,
    f"""
    CREATE TRIGGER memory_apitoken_no_replace BEFORE INSERT ON memory_apitoken
    WHEN EXISTS (SELECT 1 FROM memory_apitoken WHERE id = NEW.id OR name = NEW.name
                 OR token_hash = NEW.token_hash)
    BEGIN SELECT RAISE(ABORT, '{_quoted(REPLACE_MESSAGE)}'); END
    """,
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS memory_apitoken_grant_immutable",
    "DROP TRIGGER IF EXISTS memory_apitoken_governed_after_grant",
    "DROP TRIGGER IF EXISTS memory_apitoken_no_delete",
    "DROP TRIGGER IF EXISTS memory_apitoken_no_replace",
]

# grove_refuse and grove_refuse_truncate are 0013's (0022 made the latter test-databases-only).
POSTGRESQL = [
    f"""
    CREATE TRIGGER memory_apitoken_grant_immutable BEFORE UPDATE ON memory_apitoken
    FOR EACH ROW WHEN ({_fixed("IS DISTINCT FROM")})
    EXECUTE FUNCTION grove_refuse('{_quoted(UPDATE_MESSAGE)}')
    """,
    POSTGRESQL_GOVERNED_FUNCTION,
    f"""
    CREATE TRIGGER memory_apitoken_governed_after_grant BEFORE UPDATE ON memory_apitoken
    FOR EACH ROW WHEN ({_governed("IS DISTINCT FROM")})
    EXECUTE FUNCTION grove_apitoken_governed('{_quoted(UPDATE_MESSAGE)}')
    """,
    f"""
    CREATE TRIGGER memory_apitoken_no_delete BEFORE DELETE ON memory_apitoken
    FOR EACH ROW EXECUTE FUNCTION grove_refuse('{_quoted(DELETE_MESSAGE)}')
    """,
    f"""
    CREATE TRIGGER memory_apitoken_no_truncate BEFORE TRUNCATE ON memory_apitoken
    FOR EACH STATEMENT EXECUTE FUNCTION grove_refuse_truncate('{_quoted(TRUNCATE_MESSAGE)}')
    """,
]
POSTGRESQL_BACKWARD = [
    "DROP TRIGGER IF EXISTS memory_apitoken_grant_immutable ON memory_apitoken",
    "DROP TRIGGER IF EXISTS memory_apitoken_governed_after_grant ON memory_apitoken",
    "DROP FUNCTION IF EXISTS grove_apitoken_governed()",
    "DROP TRIGGER IF EXISTS memory_apitoken_no_delete ON memory_apitoken",
    "DROP TRIGGER IF EXISTS memory_apitoken_no_truncate ON memory_apitoken",
]


def _run(sqlite: list[str], postgresql: list[str]):
    def run(apps, schema_editor) -> None:
        statements = postgresql if schema_editor.connection.vendor == "postgresql" else sqlite
        with schema_editor.connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("memory", "0027_session_files")]

    operations = [
        migrations.RunPython(_run(SQLITE, POSTGRESQL), _run(SQLITE_BACKWARD, POSTGRESQL_BACKWARD)),
    ]
