"""The closed sets of values the models' columns take, and the CHECK that holds a column to one."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


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
    # The owner lets sleep collect the decays its guard held back (memory/forgetting.py).
    DECAYS_RELEASED = "decays_released"
    # A token's grant (name, domains, read-only, revocation) joins the chain through these
    # (memory/tokens.py); integrity and import compare each token row with its latest one.
    TOKEN_GRANTED = "token_granted"
    TOKEN_REVOKED = "token_revoked"
    # An agent's reads and recalls (memory/read.py, memory/recall/): on the record beside its
    # writes, so the owner sees everything one agent did in one list (DESIGN.md, Agents).
    READ = "read"
    RECALLED = "recalled"
    # The owner keeps a ground node's words although its file changed (memory/custody/drift.py):
    # the detail holds the file's hash then, so drift speaks again only if the file moves on.
    DRIFT_ACCEPTED = "drift_accepted"


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


class MentionKind(models.TextChoices):
    NAME = "name"
    DATE = "date"
    QUANTITY = "quantity"


class SleepStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


def choices_check(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})
