"""The audit log and the checkpoints of its hash chain (memory/audit.py writes, memory/chain.py
verifies)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.db.models.functions import Length, Trim
from django.db.models.lookups import GreaterThan
from django.utils import timezone

from memory.models.choices import EventKind, choices_check
from memory.models.graph import Node


class Event(models.Model):
    """The one audit log. Written only by memory/audit.py; append-only; never pruned."""

    at = models.DateTimeField(default=timezone.now, db_index=True)
    kind = models.CharField(max_length=24, choices=EventKind.choices)
    # No FK constraint: the log must outlive whatever it describes. No index of its own: the
    # (node, kind) index serves every lookup by node (migration 0016).
    node = models.ForeignKey(
        Node,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        null=True,
        related_name="events",
    )
    actor = models.CharField(max_length=200)
    reason = models.CharField(max_length=64, blank=True, default="")
    related_node = models.ForeignKey(
        Node,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,  # indexed where set (Meta): most events relate to no other node
        null=True,
        blank=True,
        related_name="related_events",
    )
    snapshot = models.JSONField(default=dict, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    # The agent token the act came through (None: the owner, sleep, an importer).
    token = models.ForeignKey(
        "ApiToken",
        on_delete=models.PROTECT,
        db_index=False,  # indexed where set (Meta)
        null=True,
        blank=True,
        related_name="+",
    )
    # The hash chain (memory/chain.py): sha256 of this event's canonical content and the previous
    # event's chain_hash. Nullable only so the column can be added in place; every row has one.
    chain_hash = models.CharField(max_length=64, null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["node", "kind"], name="memory_event_node_kind"),
            models.Index(fields=["kind", "at"], name="memory_event_kind_at"),
            # Partial: sleep writes tens of thousands of events a night with neither set, and
            # each NULL entry was an index write (docs/bench/sleep.md, the decay step).
            models.Index(
                fields=["related_node"],
                condition=Q(related_node__isnull=False),
                name="memory_event_related",
            ),
            # An agent's events by day and kind, counted from the index alone (the agents page).
            models.Index(
                fields=["token", "at", "kind"],
                condition=Q(token__isnull=False),
                name="memory_event_token_at",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=choices_check("kind", EventKind), name="memory_event_kind_valid"
            ),
            models.CheckConstraint(
                condition=GreaterThan(Length(Trim("actor")), 0), name="memory_event_actor_not_blank"
            ),
            models.UniqueConstraint(
                fields=["node"], condition=Q(kind="rooted"), name="memory_event_one_rooted"
            ),
            models.UniqueConstraint(
                fields=["node"],
                condition=Q(kind="superseded"),
                name="memory_event_one_superseded",
            ),
        ]
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.node_id}"


class ChainCheckpoint(models.Model):
    """How far the hash chain was last verified: event id and its chain hash at that moment.

    Incremental verification starts here (after checking this event still has this hash); a
    full verification starts from the first event. Append-only, like the log it vouches for.
    """

    event_id = models.BigIntegerField()
    chain_hash = models.CharField(max_length=64)
    verified_at = models.DateTimeField(default=timezone.now)
    full = models.BooleanField(default=False)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"chain verified through event {self.event_id}"
