"""The schema gate: Grove refuses to start on a database its code does not match (DESIGN.md).

A database whose django_migrations table names migrations this code does not have was migrated
by newer (or other) code; one with migrations this code has but the database has not applied
is behind. Either way writes would fail later with a raw OperationalError, or worse, succeed
against columns that mean something else. So web, worker and every command but the harmless
ones stop at start with one clear message instead. A memory table missing a column the models
name (a rename by hand) is refused the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper

# Commands that may run on any database: they migrate it, describe it, or do not touch it.
UNGATED_COMMANDS = frozenset(
    {
        "migrate",
        "makemigrations",
        "showmigrations",
        "sqlmigrate",
        "squashmigrations",
        "check",
        "dbshell",
        "help",
        "version",
        "collectstatic",
        "test",
    }
)


class SchemaMismatch(ImproperlyConfigured):
    """The database and this code disagree about the schema."""


def schema_problems(alias: str = DEFAULT_DB_ALIAS) -> list[str]:
    """What stands between this code and the database: unknown migrations, unapplied ones,
    missing memory columns. Reads the database; writes nothing."""
    connection = connections[alias]
    executor = MigrationExecutor(connection)
    loader = executor.loader
    ours = set(loader.migrated_apps)
    unknown = sorted(
        f"{app}.{name}"
        for app, name in loader.applied_migrations
        if app in ours and (app, name) not in loader.disk_migrations
    )
    problems = [f"applied migrations this code does not know: {', '.join(unknown)}"] * bool(unknown)
    # Every migration on disk that is not recorded, not just the plan to the leaves: Django's
    # plan skips an applied leaf, so a hole in the middle of the history would pass unseen.
    applied = loader.applied_migrations
    missing = sorted(key for key in loader.graph.nodes if key not in applied)
    if pending := [f"{app}.{name}" for app, name in missing]:
        shown = ", ".join(pending[:5]) + (
            f" and {len(pending) - 5} more" if len(pending) > 5 else ""
        )
        problems.append(f"migrations not applied: {shown}")
    if not problems:
        problems += _missing_columns(connection)
    return problems


def _missing_columns(connection: BaseDatabaseWrapper) -> list[str]:
    tables = set(connection.introspection.table_names())
    found = []
    with connection.cursor() as cursor:
        for model in apps.get_app_config("memory").get_models():
            table = model._meta.db_table
            if table not in tables:
                found.append(f"table {table} is missing")
                continue
            have = {c.name for c in connection.introspection.get_table_description(cursor, table)}
            found += [
                f"column {table}.{field.column} is missing"
                for field in model._meta.concrete_fields
                if field.column not in have
            ]
    return found


def require_current_schema(alias: str = DEFAULT_DB_ALIAS) -> None:
    """Refuse (SchemaMismatch) a database this code does not match, naming what differs."""
    if problems := schema_problems(alias):
        name = connections[alias].settings_dict.get("NAME")
        raise SchemaMismatch(
            f"Grove will not start on {name}: "
            + "; ".join(problems)
            + ". Run `manage.py migrate` with the code that matches this database (a newer "
            "database needs newer code; never run older code on it)."
        )
