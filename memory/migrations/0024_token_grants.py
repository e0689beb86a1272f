"""Token grants on the chain: `token_granted` and `token_revoked` events (memory/tokens.py), and
one grant recorded now for each token minted before them, so integrity and import can hold every
token row to its latest grant with no token judged leniently (DESIGN.md, Custody).

SQLite changes a CHECK constraint by rebuilding the table, and the rebuild drops the table's
triggers and the raw batch index (0023): both are recreated here, the triggers from 0005_custody's
own text as 0019 does. PostgreSQL swaps the constraint in place.

The backfill goes through the audit writer (the chain's one writer), with the migration's
clock and the reason "backfill": a grant as it stood when the record began, not as it was made.
"""

import hashlib
from importlib import import_module

from django.db import migrations, models

_declined = import_module("memory.migrations.0006_declined")
_released = import_module("memory.migrations.0019_decays_released")
_batch = import_module("memory.migrations.0023_event_batch_index")

KINDS = [*_released.KINDS, "token_granted", "token_revoked"]


def _rebuilt(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    _declined._recreate_event_triggers(apps, schema_editor)
    _batch._drop(apps, schema_editor)
    _batch._create(apps, schema_editor)


def grant_detail(token) -> dict:
    """The grant as memory.tokens.grant_detail spelled it when this migration was written:
    frozen here, because the live model and function grow fields this table does not hold yet
    (0025's governance: integrity reads a grant without them as their defaults)."""
    revoked = token.revoked_at
    return {
        "token": token.pk,
        "name": token.name,
        "prefix": token.prefix,
        "domains": list(token.domains),
        "read_only": bool(token.read_only),
        "revoked_at": None if revoked is None else revoked.isoformat(),
        "token_hash_sha256": hashlib.sha256(token.token_hash.encode("ascii")).hexdigest(),
    }


def _grant_existing_tokens(apps, schema_editor) -> None:
    from memory import audit
    from memory.models import Event

    ApiToken = apps.get_model("memory", "ApiToken")

    granted = {
        detail.get("token")
        for detail in Event.objects.filter(kind="token_granted").values_list("detail", flat=True)
    }
    for token in ApiToken.objects.order_by("id"):
        if token.pk in granted:
            continue
        audit.record(
            "token_granted",
            node=None,
            actor="migration",
            reason="backfill",
            detail=grant_detail(token),
        )


class Migration(migrations.Migration):
    dependencies = [("memory", "0023_event_batch_index")]

    operations = [
        migrations.RemoveConstraint(model_name="event", name="memory_event_kind_valid"),
        migrations.AlterField(
            model_name="event",
            name="kind",
            field=models.CharField(
                choices=[(k, k.replace("_", " ").title()) for k in KINDS], max_length=24
            ),
        ),
        migrations.AddConstraint(
            model_name="event",
            constraint=models.CheckConstraint(
                condition=models.Q(kind__in=KINDS), name="memory_event_kind_valid"
            ),
        ),
        migrations.RunPython(_rebuilt, migrations.RunPython.noop),
        migrations.RunPython(_grant_existing_tokens, migrations.RunPython.noop),
    ]
