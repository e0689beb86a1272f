"""The write path: the one function every write goes through (API, importers, dashboard, demo).

scrub -> validate -> content_key lookup (claim kinds only) -> insert node, edges (the FTS row is
written by the database's own trigger) in one transaction.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from memory import audit
from memory.clocks import parse_instant
from memory.errors import Conflict, Invalid, TooLarge
from memory.models import (
    OCCURRENCE_KINDS,
    Edge,
    EdgeKind,
    Event,
    EventKind,
    Jurisdiction,
    Kind,
    Node,
)

# Transport scaffolding: model reasoning and system blocks, chat-template tokens. Never the claim.
_SCAFFOLD_BLOCKS = re.compile(
    r"<(think|thinking|system|system-reminder)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)
_SCAFFOLD_TAGS = re.compile(
    r"</?(think|thinking|system|system-reminder)\b[^>]*>|<\|(im_start|im_end|endoftext|eot_id)\|>"
    r"(?:(?<=im_start\|>)(system|user|assistant)\b)?",
    re.IGNORECASE,
)
_WS = re.compile(r"\s+")
# Documents brought in from outside: their origin may be the source they were read from.
EXTERNAL_KINDS = frozenset({Kind.IMPORT, Kind.INTERNET})


def scrub(text: str) -> str:
    """Strip transport scaffolding (<think>/<system> blocks, stray tags, template tokens) and
    normalise line endings. Never rewrites the words of the claim itself."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = _SCAFFOLD_BLOCKS.sub("", text)
    text = _SCAFFOLD_TAGS.sub("", text)
    return text.strip()


def body_hash_of(body: str) -> str:
    """sha256 hex of the stored (already scrubbed) body."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def content_key_of(body: str) -> str:
    """The tombstone key: sha256 of NFKC, casefolded, whitespace-folded text."""
    folded = _WS.sub(" ", unicodedata.normalize("NFKC", body).casefold()).strip()
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ScrollPointer:
    path: str
    offset: int
    hash: str


@dataclass(frozen=True)
class WriteResult:
    node: Node
    status: Literal["created", "duplicate", "revived"]

    @property
    def created(self) -> bool:
        return self.status == "created"


def check_lengths(*, source: str, signature: str) -> None:
    """Refuse (TooLarge) a source or signature over its limit: both travel in every packet."""
    for name, text in (("source", source), ("signature", signature)):
        limit = getattr(settings, f"GROVE_MAX_{name.upper()}_CHARS")
        if isinstance(text, str) and len(text) > limit:
            raise TooLarge(f"{name} has {len(text)} characters; the limit is {limit}")


def _choice(value: Any, choices, field: str) -> str:
    if value not in choices.values:
        raise Invalid(
            f"unknown {field} {value!r}; expected one of: {', '.join(choices.values)}",
            code=f"unknown_{field}",
        )
    return value


def _parse_origins(origins: Iterable[Mapping[str, Any]] | None) -> list[tuple[int, str]]:
    parsed: list[tuple[int, str]] = []
    for origin in origins or ():
        if not isinstance(origin, Mapping) or "id" not in origin:
            raise Invalid("each origin needs an id and a relation", code="bad_origin")
        try:
            origin_id = int(origin["id"])
        except (TypeError, ValueError):
            raise Invalid(
                f"origin id {origin['id']!r} is not a node id", code="bad_origin"
            ) from None
        relation = _choice(origin.get("relation", EdgeKind.DERIVED_FROM), EdgeKind, "edge_kind")
        if relation == EdgeKind.NESTS:  # container -> part, made only by extract (nest_into)
            raise Invalid("nests edges are made by extracting, not named", code="bad_origin")
        parsed.append((origin_id, relation))
    return parsed


def _link(node: Node, origins: list[tuple[int, str]], *, actor: str) -> None:
    for origin_id, relation in origins:
        if origin_id == node.pk:
            continue  # a re-arrival that names itself adds no self-loop
        Edge.objects.get_or_create(
            from_node=node, to_node_id=origin_id, kind=relation, defaults={"created_by": actor}
        )


def write_node(
    *,
    body: str,
    kind: str,
    jurisdiction: str,
    signature: str,
    origins: Iterable[Mapping[str, Any]] | None = None,
    source: str = "",
    domain: str = "personal",
    referent_time: str | datetime | None = None,
    metadata: Mapping[str, Any] | None = None,
    scroll: ScrollPointer | None = None,
    actor: str | None = None,
    created_at: datetime | None = None,
    nest: Nest | None = None,
) -> WriteResult:
    """Write one node through scrub, validation and the tombstone/revival/duplicate lookup.

    Reads the store clock only to stamp created_at (overridable for importers and the demo).
    Refuses (Invalid) unknown kinds, jurisdictions or edge kinds, blank signatures, empty or
    oversized bodies, naive or unparseable referent_time, a non-pair without origins, a pair
    without a scroll pointer, unknown origins; refuses (Conflict) content the owner rejected.
    Nothing is stored when anything is refused. With `nest` (memory/extract.py) the node is a
    verbatim part of its parent: see nest_into.
    """
    if not isinstance(body, str) or not isinstance(source, str):
        raise Invalid("body and source must be text", code="bad_body")
    if len(body) > settings.GROVE_MAX_BODY_CHARS:
        raise TooLarge(
            f"body has {len(body)} characters; the limit is {settings.GROVE_MAX_BODY_CHARS}"
        )
    check_lengths(source=source, signature=signature)
    kind = _choice(kind, Kind, "kind")
    jurisdiction = _choice(jurisdiction, Jurisdiction, "jurisdiction")
    if not isinstance(signature, str) or not signature.strip():
        raise Invalid("signature is required: say who wrote this", code="unsigned")
    if not isinstance(domain, str) or not domain.strip():
        raise Invalid("domain must be a non-empty label", code="bad_domain")
    referent = parse_instant(referent_time)
    links = _parse_origins(origins)
    if kind == Kind.PAIR:
        if scroll is None or not scroll.path or not scroll.hash or scroll.offset is None:
            raise Invalid("a pair needs a scroll pointer (path, offset, hash)", code="no_scroll")
    elif not links and not (kind in EXTERNAL_KINDS and source.strip()):
        raise Invalid(
            f"a {kind} needs at least one origin: say what it came from"
            + (" (or name its source)" if kind in EXTERNAL_KINDS else ""),
            code="no_origin",
        )
    clean = scrub(body)
    if not clean:
        raise Invalid("body is empty once transport scaffolding is removed", code="empty_body")
    actor = actor or signature
    key = content_key_of(clean)
    if nest is not None:
        metadata = {**(metadata or {}), "extract": nest.as_json()}

    refused_by: int | None = None
    with transaction.atomic():
        origin_ids = {origin_id for origin_id, _ in links}
        found = set(Node.objects.filter(pk__in=origin_ids).values_list("pk", flat=True))
        if missing := sorted(origin_ids - found):
            raise Invalid(f"unknown origin node(s): {missing}", code="unknown_origin")

        if kind not in OCCURRENCE_KINDS:
            same = Node.objects.filter(content_key=key, domain=domain).exclude(
                kind__in=OCCURRENCE_KINDS
            )
            rejected = (
                Event.objects.filter(kind=EventKind.REJECTED, node__in=same)
                .order_by("-at")
                .values_list("node_id", flat=True)
                .first()
            )
            if rejected:
                # The refusal is recorded on the predecessor after this (empty) transaction ends.
                refused_by = rejected
            elif nest is None and (
                live := same.filter(decayed_at__isnull=True).order_by("id").first()
            ):
                _link(live, links, actor=actor)
                return WriteResult(live, "duplicate")
            elif nest is None and (
                decayed := same.filter(decayed_at__isnull=False).order_by("-id").first()
            ):
                now = timezone.now()
                Node.objects.filter(pk=decayed.pk).update(
                    decayed_at=None, access_count=F("access_count") + 1, last_accessed_at=now
                )
                audit.record(
                    EventKind.REVIVED,
                    node=decayed,
                    actor=actor,
                    reason="rearrival",
                    detail={"signature": signature},
                )
                _link(decayed, links, actor=actor)
                decayed.refresh_from_db()
                return WriteResult(decayed, "revived")

        if refused_by is None:
            node = _insert(
                clean,
                key,
                kind=kind,
                jurisdiction=jurisdiction,
                domain=domain,
                signature=signature,
                source=source,
                metadata=metadata,
                referent=referent,
                created_at=created_at,
                scroll=scroll,
                links=links,
                actor=actor,
            )
            if nest is not None:
                nest_into(node, nest, actor=actor)
    if refused_by is not None:
        with transaction.atomic():
            audit.record(
                EventKind.REARRIVAL_REFUSED,
                node=refused_by,
                actor=actor,
                reason="tombstoned",
                detail={"body_hash": body_hash_of(clean), "signature": signature},
            )
        raise Conflict(
            f"this content was rejected by the owner (node {refused_by}); it cannot arrive again",
            code="tombstoned",
        )
    return WriteResult(node, "created")


def _insert(
    clean: str,
    key: str,
    *,
    kind: str,
    jurisdiction: str,
    domain: str,
    signature: str,
    source: str,
    metadata: Mapping[str, Any] | None,
    referent: datetime | None,
    created_at: datetime | None,
    scroll: ScrollPointer | None,
    links: list[tuple[int, str]],
    actor: str,
) -> Node:
    node = Node(
        body=clean,
        body_hash=body_hash_of(clean),
        content_key=key,
        jurisdiction=jurisdiction,
        kind=kind,
        domain=domain,
        signature=signature.strip(),
        source=source or "",
        metadata=dict(metadata or {}),
        referent_time=referent,
        created_at=created_at or timezone.now(),
    )
    if scroll is not None:
        node.scroll_path, node.scroll_offset, node.scroll_hash = (
            scroll.path,
            scroll.offset,
            scroll.hash,
        )
    try:
        with transaction.atomic():
            node.save(force_insert=True)
            _link(node, links, actor=actor)
    except IntegrityError as exc:
        raise Invalid(f"refused by the database: {exc}", code="constraint") from exc
    return node


# --- nested verbatim extracts (the write path's hook for memory/extract.py) -------------------


@dataclass(frozen=True)
class Nest:
    """Where an extract sits: its body is parent.body[start:end], word for word."""

    parent: int
    start: int
    end: int

    def as_json(self) -> dict[str, int]:
        return {"parent": self.parent, "start": self.start, "end": self.end}


def nest_into(node: Node, nest: Nest, *, actor: str) -> None:
    """Inside the write's transaction: refuse (Invalid, not_verbatim) unless the new node's body
    is exactly parent.body[start:end], then add the nests edge parent -> node (container ->
    part). An extract is an occurrence of those words in that parent: it is never merged with
    other nodes of the same words (only the tombstone applies)."""
    parent = Node.objects.filter(pk=nest.parent).values_list("body", flat=True).first()
    if parent is None or parent[nest.start : nest.end] != node.body or nest.start < 0:
        raise Invalid(
            f"the extract is not node {nest.parent}'s text from {nest.start} to {nest.end}, "
            "word for word",
            code="not_verbatim",
        )
    Edge.objects.create(
        from_node_id=nest.parent, to_node=node, kind=EdgeKind.NESTS, created_by=actor
    )
