"""PostgreSQL's TRUNCATE guard that no session setting lifts.

TRUNCATE fires no row trigger, so migration 0013 guards the record's tables with statement
triggers that a test flush passes by setting grove.allow_flush for its transaction. Any session
may set that, so any connection could empty the record. The guard now also asks for a database
whose name starts with test_: Django names every test database so (test_<NAME>), and a session
cannot rename the database it is connected to (ALTER DATABASE ... RENAME refuses the current
database), so a production connection cannot take this path whatever it sets. A name, not a
role: the test databases are made by the same role as production's, and a role can be SET.
Never name a production database test_... (README, PostgreSQL). SQLite has no TRUNCATE.
"""

from django.db import migrations

_GUARD = """
CREATE OR REPLACE FUNCTION grove_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('grove.allow_flush', true), '') = 'on'
       AND {condition} THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'integrity_constraint_violation';
END $$
"""
FORWARD = _GUARD.format(condition="starts_with(current_database(), 'test_')")
BACKWARD = _GUARD.format(condition="TRUE")


def _guard(sql: str):
    def run(apps, schema_editor) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)  # no placeholders: the % is plpgsql's

    return run


class Migration(migrations.Migration):
    dependencies = [("memory", "0021_source_width")]

    operations = [migrations.RunPython(_guard(FORWARD), _guard(BACKWARD))]
