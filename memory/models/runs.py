"""Records of runs: each recall asked, each sleep run requested."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from memory.models.choices import SleepStatus, choices_check


class RecallLog(models.Model):
    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.CharField(max_length=200)
    query = models.TextField()
    scope = models.CharField(max_length=8)
    domains = models.JSONField(default=list)
    as_of = models.DateTimeField(null=True, blank=True)
    result_ids = models.JSONField(default=list)
    took_ms = models.FloatField(default=0)
    # A dig (memory.recall.dig): a look into the decayed nodes only, not an ordinary recall.
    dig = models.BooleanField(default=False, db_default=False)

    def __str__(self) -> str:
        return f"{'dig' if self.dig else 'recall'} {self.query[:40]!r} by {self.actor}"


class SleepRun(models.Model):
    requested_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Heartbeat while running: a run whose worker died stops beating and is marked failed.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=SleepStatus.choices, default=SleepStatus.QUEUED)
    requested_by = models.CharField(max_length=200, default="schedule")
    dry_run = models.BooleanField(default=False)
    max_nodes = models.PositiveIntegerField(null=True, blank=True)
    only_step = models.CharField(max_length=16, blank=True, default="")
    current_step = models.CharField(max_length=16, blank=True, default="")
    steps = models.JSONField(default=dict)  # {step: {"count": n, "ms": t, ...}}
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=choices_check("status", SleepStatus), name="memory_sleeprun_status_valid"
            ),
            # One run at a time, held by the database itself.
            models.UniqueConstraint(
                fields=["status"],
                condition=Q(status="running"),
                name="memory_sleeprun_one_running",
            ),
        ]

    def __str__(self) -> str:
        return f"sleep run {self.pk} {self.status}"
