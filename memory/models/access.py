"""Who may come in and what they hold: agent tokens, walk tickets, pending cites."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from memory.models.graph import Node


class Ticket(models.Model):
    """A durable walk ticket: opaque to its holder (only the hash is stored), single-use."""

    token_hash = models.CharField(max_length=64, unique=True)
    holder = models.CharField(max_length=200)
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="+")
    domains = models.JSONField(default=list)
    scope = models.CharField(max_length=8, default="both")
    as_of = models.DateTimeField(null=True, blank=True)
    # Routes that around() disclosed: [[direction, node_id], ...]; step() may use only these.
    disclosed = models.JSONField(default=list)
    parent = models.ForeignKey("self", on_delete=models.PROTECT, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    spent_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"ticket {self.holder} @#{self.node_id}"


class ApiToken(models.Model):
    name = models.CharField(max_length=100, unique=True)
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    domains = models.JSONField(default=list)
    read_only = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # The owner's governance (memory/tokens.py change_token; each change a grant on the chain):
    # a muted token's proposals wait out of the queue; auto_decline declines them as they come;
    # write_limit caps its writes per minute (0: no cap).
    muted = models.BooleanField(default=False, db_default=False)
    auto_decline = models.BooleanField(default=False, db_default=False)
    write_limit = models.PositiveIntegerField(default=0, db_default=0)
    # The rate window (not granted, so not on the chain, like last_used_at): the minute that
    # started at write_window_at and how many writes it has counted.
    write_window_at = models.DateTimeField(null=True, blank=True)
    write_window_count = models.PositiveIntegerField(default=0, db_default=0)

    def __str__(self) -> str:
        return f"token {self.name}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class PendingCite(models.Model):
    """A wild node a holder read; their next pair gets a cites edge to it (DESIGN.md, walk)."""

    holder = models.CharField(max_length=200)
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    consumed_by = models.ForeignKey(
        Node, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        indexes = [models.Index(fields=["holder", "consumed_by"], name="memory_pendingcite_open")]

    def __str__(self) -> str:
        return f"cite #{self.node_id} for {self.holder}"
