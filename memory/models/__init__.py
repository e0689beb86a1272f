"""Grove's data: fields, constraints and one-row properties. Logic lives in verb-named modules.

One module per group of models; every name is re-exported here, so `from memory.models import
Node` holds everywhere (and Django finds the models in the app's `models` module).
"""

from __future__ import annotations

from memory.models.access import ApiToken, PendingCite, Ticket
from memory.models.choices import (
    CEREMONY_EVENT_KINDS,
    OCCURRENCE_KINDS,
    DecayReason,
    EdgeKind,
    EventKind,
    Jurisdiction,
    Kind,
    MentionKind,
    SleepStatus,
    Trust,
)
from memory.models.graph import Edge, Mention, Node, Vector
from memory.models.log import ChainCheckpoint, Event

# Importing it registers the __glob lookup the CHECK constraints use.
from memory.models.lookups import Glob, glob_to_regex
from memory.models.runs import RecallLog, SessionFile, SleepRun, WatchScan

__all__ = [
    "CEREMONY_EVENT_KINDS",
    "OCCURRENCE_KINDS",
    "ApiToken",
    "ChainCheckpoint",
    "DecayReason",
    "Edge",
    "EdgeKind",
    "Event",
    "EventKind",
    "Glob",
    "Jurisdiction",
    "Kind",
    "Mention",
    "MentionKind",
    "Node",
    "PendingCite",
    "RecallLog",
    "SessionFile",
    "SleepRun",
    "SleepStatus",
    "Ticket",
    "Trust",
    "Vector",
    "WatchScan",
    "glob_to_regex",
]
