"""The write path: the one function every write goes through (API, importers, dashboard, demo).

_validate (scrub and check) -> _tombstone and _known (the content-key lookup, claim kinds only,
within domain, jurisdiction and kind) -> _insert (node, edges, its `arrived` event; the FTS row is
written by the database's own trigger), all in one transaction. The body's scrub and hashes
are in memory/scrub.py, the nested-extract hook (Nest, nest_into) below the write itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, NoReturn, cast

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, TextChoices
from django.utils import timezone

from memory import audit, inputs
from memory.clocks import parse_instant
from memory.errors import Conflict, Forbidden, Invalid, TooLarge
from memory.models import (
    OCCURRENCE_KINDS,
    ApiToken,
    Edge,
    EdgeKind,
    Event,
    EventKind,
    Jurisdiction,
    Kind,
    Node,
    Trust,
)
from memory.reach import HELD_BY_REVIVED, HOLDING, OWNER_WROTE, restore_held
from memory.scrub import body_hash_of as body_hash_of  # re-exported: drift, ceremony
from memory.scrub import content_key_of as content_key_of  # re-exported: bench/synthetic.py
from memory.scrub import redact, scrub_report
from memory.scrub import scrub as scrub  # re-exported: importers, scroll, drift, ceremony
from memory.trust import trust_map

# Documents brought in from outside: their origin may be the source they were read from.
EXTERNAL_KINDS = frozenset({Kind.IMPORT, Kind.INTERNET})


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


def _choice(value: Any, choices: type[TextChoices], field: str) -> str:
    if value not in choices.values:
        raise Invalid(
            f"unknown {field} {value!r}; expected one of: {', '.join(choices.values)}",
            code=f"unknown_{field}",
        )
    return cast(str, value)  # one of the choices' values


def _parse_origins(origins: Iterable[Mapping[str, Any]] | None) -> list[tuple[int, str]]:
    parsed: list[tuple[int, str]] = []
    for origin in origins or ():
        if not isinstance(origin, Mapping) or "id" not in origin:
            raise Invalid("each origin needs an id and a relation", code="bad_origin")
        origin_id = inputs.node_id(origin["id"], name="origin id", code="bad_origin")
        relation = _choice(origin.get("relation", EdgeKind.DERIVED_FROM), EdgeKind, "edge_kind")
        if relation == EdgeKind.NESTS:  # container -> part, made only by extract (nest_into)
            raise Invalid("nests edges are made by extracting, not named", code="bad_origin")
        parsed.append((origin_id, relation))
    return parsed


def _link(node: Node, origins: list[tuple[int, str]], *, actor: str) -> None:
    """The edges of a node this caller is writing now (never of a node someone else wrote)."""
    for origin_id, relation in origins:
        Edge.objects.get_or_create(
            from_node=node, to_node_id=origin_id, kind=relation, defaults={"created_by": actor}
        )


@dataclass(frozen=True)
class _Request:
    """A validated write: everything the lookup and the insert need, checked once."""

    body: str
    key: str
    kind: str
    jurisdiction: str
    domain: str
    signature: str
    source: str
    metadata: dict[str, Any]
    referent: datetime | None
    created_at: datetime | None
    scroll: ScrollPointer | None
    links: list[tuple[int, str]]
    actor: str
    token: ApiToken | None
    scrubbed: dict[str, dict[str, int]]

    def writer(self) -> dict[str, Any]:
        """Who wrote it, as events record it: the signature claimed and the token used."""
        return {"signature": self.signature, "token": self.token.name if self.token else None}


def _redacted_metadata(
    metadata: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], Counter[str]]:
    """Metadata with every string in it redacted (keys too: an agent names its own fields), and
    the kinds found: what arrives beside a body is stored as durably as the body."""
    found: Counter[str] = Counter()

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            text, kinds = redact(value)
            found.update(kinds)
            return text
        if isinstance(value, list):
            return [clean(item) for item in value]
        if isinstance(value, dict):
            return {clean(key): clean(item) for key, item in value.items()}
        return value

    return clean(dict(metadata or {})), found


def _validate(
    *,
    body: Any,
    kind: Any,
    jurisdiction: Any,
    signature: Any,
    origins: Iterable[Mapping[str, Any]] | None,
    source: Any,
    domain: Any,
    referent_time: str | datetime | None,
    metadata: Mapping[str, Any] | None,
    scroll: ScrollPointer | None,
    actor: str | None,
    created_at: datetime | None,
    token: ApiToken | None,
) -> _Request:
    """Scrub and check one write; refuses (Invalid, TooLarge) before anything is read or stored."""
    if not isinstance(body, str) or not isinstance(source, str):
        raise Invalid("body and source must be text", code="bad_body")
    # Text both engines can store, at every door that writes (API, MCP, dashboard, importers).
    inputs.screen_text([body, source, signature, domain, metadata, actor])
    if len(body) > settings.GROVE_MAX_BODY_CHARS:
        raise TooLarge(
            f"body has {len(body)} characters; the limit is {settings.GROVE_MAX_BODY_CHARS}"
        )
    check_lengths(source=source, signature=signature)
    # The actor is stored on the events and as the reader: refused past its column's width,
    # which PostgreSQL enforces and SQLite does not (one answer on both engines).
    actor_chars = Event._meta.get_field("actor").max_length or 0
    if actor is not None and (not isinstance(actor, str) or len(actor) > actor_chars):
        raise Invalid(f"actor must be text of at most {actor_chars} characters", code="bad_actor")
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
    report = scrub_report(body)
    clean = report.text
    if not clean:
        raise Invalid("body is empty once transport scaffolding is removed", code="empty_body")
    # A URL's password travels in the source as readily as in the body, and in metadata.
    source, in_source = redact(source)
    metadata, in_metadata = _redacted_metadata(metadata)
    redacted = Counter(report.redacted) + Counter(in_source) + in_metadata
    scrubbed = {"stripped": report.stripped, "redacted": dict(redacted)}
    return _Request(
        body=clean,
        key=content_key_of(clean),
        kind=kind,
        jurisdiction=jurisdiction,
        domain=domain,
        signature=signature.strip(),
        source=source or "",
        metadata=dict(metadata or {}),
        referent=referent,
        # In UTC, as the row keeps it, so the arrival's snapshot says what the row says.
        created_at=parse_instant(created_at, field="created_at"),
        scroll=scroll,
        links=links,
        actor=actor or signature,
        token=token,
        scrubbed={name: counts for name, counts in scrubbed.items() if counts},
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
    token: ApiToken | None = None,
    nest: Nest | None = None,
    owner: bool = False,
    redacted: Mapping[str, int] | None = None,
) -> WriteResult:
    """Write one node through scrub, validation and the tombstone/revival/duplicate lookup.

    Reads the store clock only to stamp created_at (overridable for importers and the demo).
    Refuses (Invalid) unknown kinds, jurisdictions or edge kinds, blank signatures, empty or
    oversized bodies, naive or unparseable referent_time, a non-pair without origins, a pair
    without a scroll pointer, unknown origins; refuses (Conflict) content the owner rejected.
    Nothing is stored when anything is refused (but the refusal's own event). `token` is the
    agent token the write came through: the node and its events record it. With `nest`
    (memory/extract.py) the node is a verbatim part of its parent (see nest_into): never merged
    with a duplicate, though the tombstone still applies. With `owner` the words are the owner's,
    written on the dashboard: the node (new, duplicate or revived) is kept in the same
    transaction (a kept event, reason OWNER_WROTE), so it holds itself and what it depends on,
    as Keep does (memory/reach.py). Refuses (Forbidden) `owner` with an agent token: no agent
    can claim the owner's words. Credentials in the body or source are replaced by a label
    (memory/scrub.py), counted by kind on the arrival; `redacted` adds what a caller redacted
    before (the scroll, whose record is written first).
    """
    if owner and token is not None:
        raise Forbidden("an agent token cannot write the owner's words", code="owner_only")
    request = _validate(
        body=body,
        kind=kind,
        jurisdiction=jurisdiction,
        signature=signature,
        origins=origins,
        source=source,
        domain=domain,
        referent_time=referent_time,
        metadata=metadata,
        scroll=scroll,
        actor=actor,
        created_at=created_at,
        token=token,
    )
    if redacted:
        before = Counter(request.scrubbed.get("redacted", {})) + Counter(redacted)
        request = replace(request, scrubbed={**request.scrubbed, "redacted": dict(before)})
    if nest is not None:
        request = replace(request, metadata={**request.metadata, "extract": nest.as_json()})
    claim = request.kind not in OCCURRENCE_KINDS  # occurrences are never merged or refused
    with transaction.atomic():
        origin_ids = {origin_id for origin_id, _ in request.links}
        found = dict(Node.objects.filter(pk__in=origin_ids).values_list("pk", "decayed_at"))
        if missing := sorted(origin_ids - found.keys()):
            raise Invalid(f"unknown origin node(s): {missing}", code="unknown_origin")
        # A new note is a young root: holding a decayed origin (deriving from it, citing it)
        # would leave a live node holding a decayed one. The owner restores it first. Sequence
        # (responds_to) does not hold, so a conversation may resume after its old turns went.
        held = {pk for pk, relation in request.links if relation in HOLDING}
        if gone := sorted(pk for pk in held if found[pk] is not None):
            raise Conflict(
                f"origin node(s) {gone} have decayed; restore them first", code="decayed_origin"
            )
        same = _same_key(request) if claim else []
        refused_by = _tombstone(request, same) if claim else None
        if refused_by is None:
            result = _known(request, same) if claim and nest is None else None
            if result is None:
                result = WriteResult(_insert(request), "created")
                if nest is not None:
                    nest_into(result.node, nest, actor=request.actor)
            if owner:
                audit.record(
                    EventKind.KEPT, node=result.node, actor=request.actor, reason=OWNER_WROTE
                )
            return result
    _refuse(request, refused_by)


def _refuse(request: _Request, refused_by: int) -> NoReturn:
    """Record the refusal on the rejected predecessor (its own transaction: the lookup stored
    nothing) and raise the tombstone's Conflict."""
    with transaction.atomic():
        audit.record(
            EventKind.REARRIVAL_REFUSED,
            node=refused_by,
            actor=request.actor,
            reason="tombstoned",
            detail={"body_hash": body_hash_of(request.body), **request.writer()},
            token=request.token,
        )
    # No node id: the answer must not tell whether the rejected node is also sealed.
    raise Conflict(
        "this content was rejected by the owner; it cannot arrive again", code="tombstoned"
    )


def _same_key(request: _Request) -> list[tuple[int, Any, str, str, str]]:
    """Every node with this write's content key, oldest first, as (pk, decayed_at, domain,
    jurisdiction, kind): read once for _tombstone and _known, by the key alone, the rest compared
    by them. With (kind, domain) or the domain in the WHERE, SQLite without statistics (a store
    is never ANALYZEd) read every node of that kind or domain on each write (1M: ~0.3 s a write).
    A key has a row or two."""
    rows = Node.objects.filter(content_key=request.key).order_by("id")
    return list(rows.values_list("pk", "decayed_at", "domain", "jurisdiction", "kind"))


def _tombstone(request: _Request, same_key: list[tuple[int, Any, str, str, str]]) -> int | None:
    """The rejected node whose content key this write carries, in its domain (any jurisdiction
    or kind: the owner rejected the words), else None. The key is also read from each rejected
    node's arrival (on the chain): a key changed on the row behind the triggers lifts nothing.
    Rejections are the owner's few acts, so that second look reads a handful of events."""
    same = [
        pk
        for pk, _, domain, _, kind in same_key
        if domain == request.domain and kind not in OCCURRENCE_KINDS
    ]
    rejected = Event.objects.filter(kind=EventKind.REJECTED).order_by("-at", "-id")
    if same and (found := rejected.filter(node__in=same).values_list("node_id", flat=True)[:1]):
        return found[0]
    arrivals = Event.objects.filter(
        kind=EventKind.ARRIVED,
        node_id=OuterRef("node_id"),
        detail__content_key=request.key,
        snapshot__domain=request.domain,
    ).exclude(snapshot__kind__in=list(OCCURRENCE_KINDS))
    return rejected.filter(Exists(arrivals)).values_list("node_id", flat=True).first()


def _known(request: _Request, same_key: list[tuple[int, Any, str, str, str]]) -> WriteResult | None:
    """The existing node this write is, if any: same content key, domain, jurisdiction and kind,
    and not sealed (sealed content answers as unseen content would: a fresh node). A live one is
    returned; a decayed one is revived. Either way the new origins are recorded on an event,
    never as edges (the caller did not write that node)."""
    wanted = (request.domain, request.jurisdiction, request.kind)
    candidates = [(pk, decayed) for pk, decayed, *fields in same_key if tuple(fields) == wanted]
    trusts = trust_map([pk for pk, _ in candidates])
    unsealed = [(pk, decayed) for pk, decayed in candidates if trusts[pk] != Trust.SEALED]
    live = next((pk for pk, decayed in unsealed if decayed is None), None)
    if live is not None:
        node = Node.objects.get(pk=live)
        if new := _new_origins(node, request.links):
            audit.record(
                EventKind.REARRIVED,
                node=node,
                actor=request.actor,
                reason="duplicate",
                detail={**request.writer(), "origins": new},
                token=request.token,
            )
        return WriteResult(node, "duplicate")
    if not unsealed:
        return None
    decayed = Node.objects.get(pk=unsealed[-1][0])
    Node.objects.filter(pk=decayed.pk).update(
        decayed_at=None,
        access_count=F("access_count") + 1,
        last_accessed_at=timezone.now(),
        last_read_by=request.actor,
    )
    audit.record(
        EventKind.REVIVED,
        node=decayed,
        actor=request.actor,
        reason="rearrival",
        detail={**request.writer(), "origins": _new_origins(decayed, request.links)},
        token=request.token,
    )
    # A revived note is read (a root): what it holds comes back with it, as a restore's does.
    restore_held(decayed.pk, actor=request.actor, reason=HELD_BY_REVIVED)
    decayed.refresh_from_db()
    return WriteResult(decayed, "revived")


def _new_origins(node: Node, links: list[tuple[int, str]]) -> list[list[Any]]:
    """The (id, relation) origins this write names that the node does not already have."""
    have = set(Edge.objects.filter(from_node=node).values_list("to_node_id", "kind"))
    return [
        [pk, rel] for pk, rel in dict.fromkeys(links) if (pk, rel) not in have and pk != node.pk
    ]


def _insert(request: _Request) -> Node:
    """Insert the node, its edges and its arrival event (its link in the hash chain)."""
    node = Node(
        body=request.body,
        body_hash=body_hash_of(request.body),
        content_key=request.key,
        jurisdiction=request.jurisdiction,
        kind=request.kind,
        domain=request.domain,
        signature=request.signature,
        source=request.source,
        metadata=request.metadata,
        referent_time=request.referent,
        created_at=request.created_at or timezone.now(),
        token=request.token,
    )
    if request.scroll is not None:
        node.scroll_path = request.scroll.path
        node.scroll_offset = request.scroll.offset
        node.scroll_hash = request.scroll.hash
    try:
        with transaction.atomic():
            node.save(force_insert=True)
            _link(node, request.links, actor=request.actor)
            audit.record(
                EventKind.ARRIVED,
                node=node,
                actor=request.actor,
                at=node.created_at,  # arrival is the store clock (an importer may back-date it)
                detail={
                    "body_hash": node.body_hash,
                    "content_key": node.content_key,
                    "metadata_hash": audit.metadata_hash(node.metadata),
                    "origins": [list(link) for link in request.links],
                    **request.writer(),
                    # What the scrub took out, by tag and by kind: counts, never the secret.
                    **request.scrubbed,
                },
                token=request.token,
                snap=audit.node_snapshot(node),
            )
    except IntegrityError as exc:
        raise Invalid(f"refused by the database: {exc}", code="constraint") from exc
    return node


# --- nested verbatim extracts: the write path's hook for memory/extract.py ---------------------


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
