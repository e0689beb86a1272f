"""The graph: nodes, the edges between them, and what is derived from their bodies (vectors,
mentions)."""

from __future__ import annotations

from datetime import datetime

from django.db import models
from django.db.models import Q
from django.db.models.functions import Length, Trim
from django.db.models.lookups import GreaterThan
from django.utils import timezone

from memory.models.choices import EdgeKind, Jurisdiction, Kind, MentionKind, choices_check


class Node(models.Model):
    body = models.TextField()
    body_hash = models.CharField(max_length=64)
    content_key = models.CharField(max_length=64)
    jurisdiction = models.CharField(max_length=8, choices=Jurisdiction.choices)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    domain = models.CharField(max_length=64, default="personal")
    signature = models.CharField(max_length=200)
    source = models.CharField(max_length=2000, blank=True, default="")
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
            # Liveness split in two partial indexes, so that no index holds the live nodes under
            # one key: SQLite without statistics (a store is never ANALYZEd) took `decayed_at IS
            # NULL` on a full (decayed_at) index for a selective equality and walked every live
            # node, ahead of the index a query needed (docs/DESIGN.md, "Two engines").
            # The forgotten, by when: the decayed lists and counts.
            models.Index(
                fields=["decayed_at"],
                condition=Q(decayed_at__isnull=False),
                name="memory_node_decayed",
            ),
            # Live ids: "which of these are live" answered from the index alone (the flag sits
            # behind the body in the row), on every recall, read and walk. decayed_at is in the
            # key, always NULL, so that SQLite counts the index as covering that question.
            models.Index(
                fields=["id", "decayed_at"],
                condition=Q(decayed_at__isnull=True),
                name="memory_node_live",
            ),
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
                condition=choices_check("jurisdiction", Jurisdiction),
                name="memory_node_jurisdiction_valid",
            ),
            models.CheckConstraint(
                condition=choices_check("kind", Kind), name="memory_node_kind_valid"
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
    def event_time(self) -> datetime:
        """The event clock: referent_time when known, else the store clock."""
        return self.referent_time or self.created_at


class Edge(models.Model):
    # No index of their own: the unique (from, to, kind) and (to, kind) lead with them.
    from_node = models.ForeignKey(
        Node, on_delete=models.PROTECT, related_name="out_edges", db_index=False
    )
    to_node = models.ForeignKey(
        Node, on_delete=models.PROTECT, related_name="in_edges", db_index=False
    )
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
                condition=choices_check("kind", EdgeKind), name="memory_edge_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.from_node_id} -{self.kind}-> {self.to_node_id}"


class Vector(models.Model):
    """An embedding. Rebuildable; a decayed node's vector may stay, so searches must filter."""

    # No index of its own: the unique (node, model) leads with it.
    node = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="vectors", db_index=False)
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


class Mention(models.Model):
    """An entity a node's body names (memory/recall/entities.py): derived from the immutable body by
    sleep, so rebuildable; recall expands through the entities its best hits share."""

    # No index of its own: the unique (node, entity) leads with it.
    node = models.ForeignKey(
        Node, on_delete=models.PROTECT, related_name="mentions", db_index=False
    )
    entity = models.CharField(max_length=100)  # casefolded key: "eiffel tower", "7 may 2023"
    kind = models.CharField(max_length=16, choices=MentionKind.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["node", "entity"], name="memory_mention_unique_node_entity"
            ),
            models.CheckConstraint(
                condition=choices_check("kind", MentionKind), name="memory_mention_kind_valid"
            ),
            models.CheckConstraint(condition=~Q(entity=""), name="memory_mention_entity_not_empty"),
        ]
        # Recall goes from an entity to the nodes naming it.
        indexes = [models.Index(fields=["entity", "node"], name="memory_mention_entity_node")]

    def __str__(self) -> str:
        return f"#{self.node_id} mentions {self.entity}"
