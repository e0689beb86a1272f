"""Grove's data: fields, constraints and one-row properties. Logic lives in verb-named modules."""

from __future__ import annotations

import re

from django.db import models
from django.db.models import Lookup, Q
from django.db.models.functions import Length, Trim
from django.db.models.lookups import GreaterThan
from django.utils import timezone


@models.CharField.register_lookup
class Glob(Lookup):
    """SQLite GLOB, so CHECK constraints can hold without REGEXP (which raw connections lack)."""

    lookup_name = "glob"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} GLOB {rhs}", [*lhs_params, *rhs_params]

    def as_postgresql(self, compiler, connection):
        # PostgreSQL has no GLOB: the same pattern as an anchored POSIX regex (~ is
        # case-sensitive like GLOB). Patterns here are literals: [classes], * and ?.
        lhs, lhs_params = self.process_lhs(compiler, connection)
        return f"{lhs} ~ %s", [*lhs_params, glob_to_regex(str(self.rhs))]


def glob_to_regex(pattern: str) -> str:
    """An anchored POSIX regex matching what SQLite's GLOB `pattern` matches."""
    out, i = ["^"], 0
    while i < len(pattern):
        ch = pattern[i]
        end = pattern.find("]", i + 2) if ch == "[" else -1
        if end != -1:
            inner = pattern[i + 1 : end]
            out.append("[^" + inner[1:] + "]" if inner.startswith("^") else f"[{inner}]")
            i = end + 1
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return "".join(out) + "$"


class Jurisdiction(models.TextChoices):
    HOME = "home", "home (made here)"
    WILD = "wild", "wild (brought in)"


class Kind(models.TextChoices):
    PAIR = "pair"
    NOTE = "note"
    JOURNAL = "journal"
    INFERENCE = "inference"
    SYNTHESIS = "synthesis"
    HEARSAY = "hearsay"
    UTTERANCE = "utterance"
    INTERNET = "internet"
    IMPORT = "import"
    QUESTION = "question"
    DRAFT = "draft"


# Occurrences: two identical turns are two events, never merged, revived or refused by content.
OCCURRENCE_KINDS = frozenset({Kind.PAIR, Kind.UTTERANCE, Kind.IMPORT})


class EdgeKind(models.TextChoices):
    DERIVED_FROM = "derived_from"
    RESPONDS_TO = "responds_to"
    CITES = "cites"
    SIMILAR = "similar"
    CONSOLIDATED_INTO = "consolidated_into"
    ASKS_ABOUT = "asks_about"
    FEEDS = "feeds"
    ANSWERS = "answers"
    REOPENS = "reopens"
    NESTS = "nests"


class Trust(models.TextChoices):
    UNREVIEWED = "unreviewed"
    PROPOSED = "proposed"
    GROUND = "ground"
    SUPERSEDED = "superseded"
    REJECTED = "rejected"
    SEALED = "sealed"


class EventKind(models.TextChoices):
    DECAYED = "decayed"
    RESTORED = "restored"
    REVIVED = "revived"
    KEPT = "kept"
    PROMOTED_PERMANENT = "promoted_permanent"
    PROPOSED = "proposed"
    DECLINED = "declined"  # the owner's "not now" to a proposal: unreviewed again, on record
    ROOTED = "rooted"
    SUPERSEDED = "superseded"
    SEALED = "sealed"
    UNSEALED = "unsealed"
    REJECTED = "rejected"
    REARRIVAL_REFUSED = "rearrival_refused"
    # A node's arrival: every node joins the hash chain through this event (DESIGN.md, Custody).
    ARRIVED = "arrived"
    # Known content written again (a live duplicate) with origins it did not have: recorded here,
    # never as edges onto a node this writer did not write.
    REARRIVED = "rearrived"


# The events only review/ceremony.py may write: they decide trust.
CEREMONY_EVENT_KINDS = frozenset(
    {
        EventKind.PROPOSED,
        EventKind.DECLINED,
        EventKind.ROOTED,
        EventKind.SUPERSEDED,
        EventKind.SEALED,
        EventKind.UNSEALED,
        EventKind.REJECTED,
    }
)


class DecayReason(models.TextChoices):
    AGE_NO_ACCESS = "age_no_access"
    CASCADE = "cascade"
    CONSOLIDATED = "consolidated"
    OWNER_LET_GO = "owner_let_go"
    # Nothing alive reaches it through a holding edge (memory/sleep/decay.py). The gate's
    # age_no_access and the cascade are retired; their old events keep their reasons.
    UNREACHABLE = "unreachable"


def _choices_check(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class Node(models.Model):
    body = models.TextField()
    body_hash = models.CharField(max_length=64)
    content_key = models.CharField(max_length=64)
    jurisdiction = models.CharField(max_length=8, choices=Jurisdiction.choices)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    domain = models.CharField(max_length=64, default="personal")
    signature = models.CharField(max_length=200)
    source = models.CharField(max_length=500, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    # Store clock: when Grove learned it. Drives decay, GC, sleep and embeddings.
    created_at = models.DateTimeField(default=timezone.now)
    # Event clock: when it happened, if known (UTC). Drives ranking and valid-time filters only.
    referent_time = models.DateTimeField(null=True, blank=True)
    # A pair's pointer into its conversation's scroll (path, byte offset, record sha256).
    scroll_path = models.CharField(max_length=500, blank=True, default="")
    scroll_offset = models.BigIntegerField(null=True, blank=True)
    scroll_hash = models.CharField(max_length=64, blank=True, default="")
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    # Distinct UTC days (store clock) with a read: permanence needs three, so a burst counts once.
    read_days = models.PositiveIntegerField(default=0, db_default=0)
    # Who read it last (a token's name, or owner for a keep): the node page names the reader.
    last_read_by = models.CharField(max_length=200, blank=True, default="", db_default="")
    permanent = models.BooleanField(default=False)
    permanent_at = models.DateTimeField(null=True, blank=True)
    decayed_at = models.DateTimeField(null=True, blank=True)
    # The agent token that wrote it (None: the owner, an importer, sleep); signature stays the
    # author's claim. Immutable, like the words.
    token = models.ForeignKey(
        "ApiToken", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        indexes = [
            models.Index(fields=["content_key"], name="memory_node_content_key"),
            models.Index(fields=["domain", "decayed_at"], name="memory_node_domain_live"),
            models.Index(fields=["created_at"], name="memory_node_created_at"),
            models.Index(fields=["decayed_at"], name="memory_node_decayed_at"),
            models.Index(fields=["kind", "domain"], name="memory_node_kind_domain"),
            # The dashboard's browse sorts by the event clock (an immutable column: no write cost
            # after arrival).
            models.Index(fields=["referent_time"], name="memory_node_referent_time"),
            # The decay mark's candidates (live, unread, not permanent), by store clock:
            # pending decays read these without touching the other rows.
            models.Index(
                fields=["created_at"],
                condition=Q(decayed_at__isnull=True, permanent=False, access_count=0),
                name="memory_node_decay_candidates",
            ),
            # Live nodes that were read: the promotion threshold's percentile, index-only.
            models.Index(
                fields=["access_count"],
                condition=Q(decayed_at__isnull=True, access_count__gt=0),
                name="memory_node_read_live",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=_choices_check("jurisdiction", Jurisdiction),
                name="memory_node_jurisdiction_valid",
            ),
            models.CheckConstraint(
                condition=_choices_check("kind", Kind), name="memory_node_kind_valid"
            ),
            models.CheckConstraint(
                condition=GreaterThan(Length("body"), 0), name="memory_node_body_not_empty"
            ),
            models.CheckConstraint(
                condition=GreaterThan(Length(Trim("signature")), 0),
                name="memory_node_signature_not_blank",
            ),
            models.CheckConstraint(
                condition=GreaterThan(Length(Trim("domain")), 0),
                name="memory_node_domain_not_blank",
            ),
            models.CheckConstraint(
                condition=Q(body_hash__glob="[0-9a-f]" * 64),
                name="memory_node_body_hash_hex64",
            ),
            models.CheckConstraint(
                condition=Q(content_key__glob="[0-9a-f]" * 64),
                name="memory_node_content_key_hex64",
            ),
            models.CheckConstraint(
                condition=~Q(kind="pair")
                | (
                    Q(scroll_hash__glob="[0-9a-f]" * 64)
                    & Q(scroll_offset__isnull=False)
                    & ~Q(scroll_path="")
                ),
                name="memory_node_pair_has_scroll_pointer",
            ),
            models.CheckConstraint(
                condition=Q(permanent=False) | Q(permanent_at__isnull=False),
                name="memory_node_permanent_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind}"

    @property
    def is_live(self) -> bool:
        return self.decayed_at is None

    @property
    def event_time(self):
        """The event clock: referent_time when known, else the store clock."""
        return self.referent_time or self.created_at


class Edge(models.Model):
    from_node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="out_edges")
    to_node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="in_edges")
    kind = models.CharField(max_length=24, choices=EdgeKind.choices)
    weight = models.FloatField(default=1.0)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.CharField(max_length=200)

    class Meta:
        indexes = [
            models.Index(fields=["to_node", "kind"], name="memory_edge_to_kind"),
            models.Index(fields=["kind"], name="memory_edge_kind"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["from_node", "to_node", "kind"], name="memory_edge_unique_from_to_kind"
            ),
            models.CheckConstraint(
                condition=~Q(from_node=models.F("to_node")), name="memory_edge_no_self_loop"
            ),
            models.CheckConstraint(
                condition=_choices_check("kind", EdgeKind), name="memory_edge_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.from_node_id} -{self.kind}-> {self.to_node_id}"


class Vector(models.Model):
    """An embedding. Rebuildable; a decayed node's vector may stay, so searches must filter."""

    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="vectors")
    model = models.CharField(max_length=200)
    dim = models.PositiveIntegerField()
    data = models.BinaryField()  # float32, little-endian, dim * 4 bytes
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["node", "model"], name="memory_vector_unique_node_model"
            ),
            models.CheckConstraint(condition=Q(dim__gt=0), name="memory_vector_dim_positive"),
        ]
        indexes = [models.Index(fields=["model", "node"], name="memory_vector_model_node")]

    def __str__(self) -> str:
        return f"vector {self.model} #{self.node_id}"


class MentionKind(models.TextChoices):
    NAME = "name"
    DATE = "date"
    QUANTITY = "quantity"


class Mention(models.Model):
    """An entity a node's body names (memory/entities.py): derived from the immutable body by
    sleep, so rebuildable; recall expands through the entities its best hits share."""

    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="mentions")
    entity = models.CharField(max_length=100)  # casefolded key: "eiffel tower", "7 may 2023"
    kind = models.CharField(max_length=16, choices=MentionKind.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["node", "entity"], name="memory_mention_unique_node_entity"
            ),
            models.CheckConstraint(
                condition=_choices_check("kind", MentionKind), name="memory_mention_kind_valid"
            ),
            models.CheckConstraint(condition=~Q(entity=""), name="memory_mention_entity_not_empty"),
        ]
        # Recall goes from an entity to the nodes naming it.
        indexes = [models.Index(fields=["entity", "node"], name="memory_mention_entity_node")]

    def __str__(self) -> str:
        return f"#{self.node_id} mentions {self.entity}"


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
            # each NULL entry was an index write (docs/bench/sleep.md, round 4).
            models.Index(
                fields=["related_node"],
                condition=Q(related_node__isnull=False),
                name="memory_event_related",
            ),
            models.Index(
                fields=["token"], condition=Q(token__isnull=False), name="memory_event_token"
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=_choices_check("kind", EventKind), name="memory_event_kind_valid"
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


class RecallLog(models.Model):
    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.CharField(max_length=200)
    query = models.TextField()
    scope = models.CharField(max_length=8)
    domains = models.JSONField(default=list)
    as_of = models.DateTimeField(null=True, blank=True)
    result_ids = models.JSONField(default=list)
    took_ms = models.FloatField(default=0)

    def __str__(self) -> str:
        return f"recall {self.query[:40]!r} by {self.actor}"


class SleepStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


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
                condition=_choices_check("status", SleepStatus), name="memory_sleeprun_status_valid"
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


class ApiToken(models.Model):
    name = models.CharField(max_length=100, unique=True)
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    domains = models.JSONField(default=list)
    read_only = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

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
