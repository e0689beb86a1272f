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


class SessionFile(models.Model):
    """Where the session importers (memory/importers/sessions.py) stopped reading a file: a
    cursor, not the record. The words are nodes; this row only lets a grown file be read from
    where it was left, and lets watch pass over a file whose size and mtime have not moved."""

    path = models.CharField(max_length=1000, unique=True)
    format = models.CharField(max_length=16)
    domain = models.CharField(max_length=64)
    size = models.BigIntegerField(default=0)
    mtime_ns = models.BigIntegerField(default=0)
    # Bytes read up to the end of the last whole line, and the sha256 of those bytes: a file
    # whose head no longer hashes the same was rewritten, and is read again from its start.
    offset = models.BigIntegerField(default=0)
    head_sha256 = models.CharField(max_length=64, blank=True, default="")
    lines = models.PositiveIntegerField(default=0)  # whole lines in those bytes, to name one
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(offset__gte=0) & Q(size__gte=0) & Q(offset__lte=models.F("size")),
                name="memory_sessionfile_offset_within_size",
            ),
            models.CheckConstraint(
                condition=Q(format__in=["claude-code", "codex"]),
                name="memory_sessionfile_format_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.format} {self.path} at {self.offset}"


class WatchScan(models.Model):
    """One scan of the watched folders (memory/importers/watch.py): what it found and brought."""

    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    folders = models.JSONField(default=list)
    files_seen = models.PositiveIntegerField(default=0)
    files_changed = models.PositiveIntegerField(default=0)
    turns_new = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"watch scan {self.pk}: {self.files_changed} files, {self.turns_new} turns"
