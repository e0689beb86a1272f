"""The acts: the only code that changes trust (DESIGN.md, Ceremonies).

Each act is one atomic function that writes its Event and nothing else (supersede also writes
the new node, through the one write path). Transactions are BEGIN IMMEDIATE, so the reads inside
atomic() happen under the database's write lock: every precondition is re-checked there, and of
two racing ceremonies exactly one wins. The unique partial indexes memory_event_one_rooted and
memory_event_one_superseded, and the trigger memory_event_rooted_hash_matches, hold the same
rules for any other path.

Only the owner roots, supersedes, seals, unseals, declines and rejects; an agent may propose.
Two noes: decline says "not now" to a proposal (the node stays, unreviewed, and may be proposed
again); reject says "false" (a tombstone). Ground is corrected by supersede: reject refuses it
unless the owner has confirmed twice (ground_confirmed). The API
never exposes the owner's acts, and they refuse an "agent:" actor as defence in depth.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import IntegrityError, transaction

from memory import audit
from memory.batches import UNDONE_REASON
from memory.errors import Conflict, Forbidden, GroveError, Invalid, NotFound, TooLarge
from memory.models import CEREMONY_EVENT_KINDS, ApiToken, Event, EventKind, Kind, Node, Trust
from memory.tokens import OWNER
from memory.trust import trust_beneath_seal, trust_of
from memory.visibility import node_in_domains
from memory.write import body_hash_of, scrub, write_node

_HEX64 = re.compile(r"[0-9a-f]{64}")
MAX_ADOPTING_CHARS = 2000
MAX_REASON_CHARS = 64  # Event.reason is a short label; longer words go in detail
# The reason of a decline the owner's auto-decline rule for a token wrote (memory/audit.py words).
AUTO_DECLINED = "auto_declined"


def _owner(owner: Any) -> str:
    if not isinstance(owner, str) or not owner.strip():
        raise Invalid("an act needs the owner's name", code="no_actor")
    if owner.strip().lower().startswith("agent:"):
        raise Forbidden("only the owner performs this act; an agent may only propose")
    return owner.strip()


def _hash(value: Any) -> str:
    text = value.strip().lower() if isinstance(value, str) else ""
    if not _HEX64.fullmatch(text):
        raise Invalid(
            "expected_body_hash must be the 64-hex sha256 of the body as displayed",
            code="bad_hash",
        )
    return text


def _words(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(
            "adopting words are required: say, in your own words, that you adopt this",
            code="no_adopting_words",
        )
    if len(value) > MAX_ADOPTING_CHARS:
        raise TooLarge(f"adopting words are limited to {MAX_ADOPTING_CHARS} characters")
    return value.strip()


def _reason(value: Any, *, required: bool = False) -> str:
    if not isinstance(value, str):
        raise Invalid("reason must be text", code="bad_reason")
    text = value.strip()
    if required and not text:
        raise Invalid("a reason is required", code="no_reason")
    return text


def _record(kind: EventKind, **fields: Any) -> Event:
    """audit.record_act, turning a unique-index refusal (a racing act won) into a Conflict."""
    try:
        with transaction.atomic():
            return audit.record_act(kind, **fields)
    except IntegrityError as exc:
        raise Conflict(f"another act got there first: {exc}", code="race_lost") from exc


def _short(reason: str) -> tuple[str, dict[str, Any]]:
    """Event.reason holds a short label; a longer reason travels whole in detail."""
    if len(reason) <= MAX_REASON_CHARS:
        return reason, {}
    return reason[: MAX_REASON_CHARS - 1] + "…", {"reason": reason}


def can_root(node: Node, trust: str) -> GroveError | None:
    """Why the owner may not root `node` (whose trust now is `trust`), or None if they may: the
    rule root() enforces under the write lock and the screens ask before offering the act."""
    if trust in (Trust.SEALED, Trust.REJECTED, Trust.SUPERSEDED):
        return Conflict(f"node {node.pk} is {trust}: it cannot be rooted", code=f"is_{trust}")
    if trust == Trust.GROUND:
        return Conflict(f"node {node.pk} is already ground", code="is_ground")
    if not node.is_live:
        return Conflict(f"node {node.pk} has decayed: restore it before rooting", code="decayed")
    return None


def can_decline(node: Node, trust: str) -> GroveError | None:
    """Why the owner may not decline a proposal on `node`, or None: only a proposed node can."""
    if trust != Trust.PROPOSED:
        return Conflict(
            f"node {node.pk} is {trust}, not proposed: there is no proposal to decline",
            code="not_proposed",
        )
    return None


def can_supersede(node: Node, trust: str) -> GroveError | None:
    """Why the owner may not supersede `node` (whose trust now is `trust`), or None if they may:
    only ground is replaced, and never a pair (a pair is what was said)."""
    if trust != Trust.GROUND:
        return Conflict(
            f"node {node.pk} is {trust}: only ground can be superseded", code="not_ground"
        )
    if node.kind == Kind.PAIR:
        return Invalid("a pair is what was said: it cannot be superseded", code="is_pair")
    return None


def _check(refusal: GroveError | None) -> None:
    if refusal is not None:
        raise refusal


def propose(
    node_id: int,
    *,
    actor: str,
    reason: str = "",
    domains: list[str] | None = None,
    token: ApiToken | None = None,
) -> Event:
    """Propose a node for rooting (agents may; `token` is the agent token it came through).
    Reads no clock but the store clock for the event.

    Refuses (NotFound) unknown, out-of-domain or sealed nodes (sealed is invisible, even by id);
    (Conflict) decayed nodes and nodes already proposed, ground, superseded or rejected.
    """
    if not isinstance(actor, str) or not actor.strip():
        raise Invalid("a proposal needs an actor", code="no_actor")
    label, extra = _short(_reason(reason))
    with transaction.atomic():
        node = node_in_domains(node_id, domains=domains)
        trust = trust_of(node.pk)
        if trust == Trust.SEALED:
            raise NotFound(f"node {node_id} not found")
        if trust != Trust.UNREVIEWED:
            raise Conflict(f"node {node.pk} is already {trust}", code=f"is_{trust}")
        if not node.is_live:
            raise Conflict(f"node {node.pk} has decayed", code="decayed")
        proposal = _record(
            EventKind.PROPOSED,
            node=node,
            actor=actor.strip(),
            reason=label,
            detail={"body_hash": node.body_hash, **extra},
            token=token,
        )
        if token is not None and token.auto_decline:
            # The owner's standing rule for this agent, applied as the proposal arrives: on
            # the record as their decline, naming the rule, in the proposal's transaction.
            _record(
                EventKind.DECLINED,
                node=node,
                actor=OWNER,
                reason=AUTO_DECLINED,
                detail={
                    "proposal": proposal.pk,
                    "proposer": proposal.actor,
                    "rule": "auto_decline",
                    "token": token.name,
                },
            )
        return proposal


def root(node_id: int, *, adopting_words: str, expected_body_hash: str, owner: str) -> Event:
    """Make a node ground: the owner adopts the exact words they were shown.

    Refuses (Forbidden) an agent actor; (Invalid) a malformed hash or empty adopting words;
    (NotFound) an unknown node; (Conflict) a stale hash, or a node that is decayed, sealed,
    rejected, superseded or already ground -- all re-checked under the write lock.
    """
    owner = _owner(owner)
    expected = _hash(expected_body_hash)
    words = _words(adopting_words)
    with transaction.atomic():
        node = node_in_domains(node_id)
        _check(can_root(node, trust_of(node.pk)))
        if node.body_hash != expected:
            raise Conflict(
                f"stale hash: node {node.pk}'s body has hash {node.body_hash}, not {expected}; "
                "review the text again before adopting it",
                code="stale_hash",
            )
        return _record(
            EventKind.ROOTED,
            node=node,
            actor=owner,
            detail={"body_hash": node.body_hash, "adopting_words": words},
        )


def preview_supersede(new_body: str, *, old: Node | None = None) -> dict[str, str]:
    """The replacement text as it will be stored (scrubbed) and its hash, to show the owner
    before they confirm; supersede() requires that hash back. Refuses empty text, and (given
    the `old` node) text whose words are the old words (only spacing differs: nothing to
    correct), both Invalid, a 400: the preview says so rather than the confirm."""
    if not isinstance(new_body, str):
        raise Invalid("the new body must be text", code="bad_body")
    clean = scrub(new_body)
    if not clean:
        raise Invalid("the new body is empty once transport scaffolding is removed")
    if old is not None and clean.split() == old.body.split():
        raise Invalid(
            f"the correction says the same words as #{old.pk}: change what is wrong, "
            "or leave it as it is",
            code="unchanged",
        )
    return {"body": clean, "body_hash": body_hash_of(clean)}


def supersede(
    old_id: int, *, new_body: str, adopting_words: str, expected_body_hash: str, owner: str
) -> Node:
    """Replace a ground node with new words that become ground; the old one is superseded for
    good (still on record, never ground again). Returns the new ground node.

    The new node goes through write_node (scrubbed; same kind, jurisdiction and domain as the
    old; derived_from the old; signed by the owner). If the text already lives in another node
    of that domain, that node is the replacement. Refuses (Forbidden) an agent actor; (Invalid)
    a malformed hash, empty words or body, a pair (a pair is what was said; it is not replaced);
    (Invalid, code unchanged) new text whose words are the old words; (Conflict) an old node
    that is not ground, a hash that does not match the new text as displayed, or rejected
    text (tombstoned; recorded on the rejected node) -- all re-checked under the write lock.
    """
    owner = _owner(owner)
    expected = _hash(expected_body_hash)
    words = _words(adopting_words)
    preview = preview_supersede(new_body)  # the words against the old: under the lock, below
    if preview["body_hash"] != expected:
        raise Conflict(
            f"stale hash: the new text as stored has hash {preview['body_hash']}, not "
            f"{expected}; preview it again before confirming",
            code="stale_hash",
        )
    refusal: GroveError | None = None
    with transaction.atomic():
        old = node_in_domains(old_id)
        _check(can_supersede(old, trust_of(old.pk)))
        preview_supersede(preview["body"], old=old)
        try:
            result = write_node(
                body=preview["body"],
                kind=old.kind,
                jurisdiction=old.jurisdiction,
                domain=old.domain,
                signature=owner,
                # The edge stays derived_from (walks, decay and recall read it so); the graph
                # draws it as "supersedes" from the superseded event (supersedes_pairs).
                origins=[{"id": old.pk, "relation": "derived_from"}],
                source=old.source,
                actor=owner,
                owner=True,
            )
        except Conflict as exc:
            # Tombstoned text: write_node stored nothing but its rearrival_refused event, which
            # must survive, so this transaction commits (it wrote nothing else) before raising.
            refusal = exc
        if refusal is None:
            _replace(old, result.node, owner=owner, words=words)
    if refusal is not None:
        raise refusal
    return result.node


def _replace(old: Node, new: Node, *, owner: str, words: str) -> None:
    """supersede's events, inside its transaction: the new node rooted (unless it already is
    ground) with the same adopting words, then the old one superseded by it."""
    if new.pk == old.pk:
        raise Conflict("the new text is the old text: nothing to supersede", code="same")
    new_trust = trust_of(new.pk)
    if new_trust != Trust.GROUND:
        _check(can_root(new, new_trust))
        _record(
            EventKind.ROOTED,
            node=new,
            actor=owner,
            related_node=old,
            detail={"body_hash": new.body_hash, "adopting_words": words, "supersedes": old.pk},
        )
    _record(
        EventKind.SUPERSEDED,
        node=old,
        actor=owner,
        related_node=new,
        detail={
            "body_hash": old.body_hash,
            "new_body_hash": new.body_hash,
            "adopting_words": words,
        },
    )


def seal(node_id: int, *, owner: str, reason: str = "") -> Event:
    """Hide a node from every read (no body, excerpt or hash anywhere). Refuses (Forbidden) an
    agent actor, (NotFound) an unknown node, (Conflict) a node already sealed."""
    owner = _owner(owner)
    label, extra = _short(_reason(reason))
    with transaction.atomic():
        node = node_in_domains(node_id)
        if trust_of(node.pk) == Trust.SEALED:
            raise Conflict(f"node {node.pk} is already sealed", code="is_sealed")
        return _record(EventKind.SEALED, node=node, actor=owner, reason=label, detail=extra)


def unseal(node_id: int, *, owner: str, reason: str = "") -> Event:
    """Restore a sealed node to what its trust was before. Refuses (Forbidden) an agent actor,
    (NotFound) an unknown node, (Conflict) a node that is not sealed."""
    owner = _owner(owner)
    label, extra = _short(_reason(reason))
    with transaction.atomic():
        node = node_in_domains(node_id)
        if trust_of(node.pk) != Trust.SEALED:
            raise Conflict(f"node {node.pk} is not sealed", code="not_sealed")
        return _record(EventKind.UNSEALED, node=node, actor=owner, reason=label, detail=extra)


def decline(
    node_id: int,
    *,
    owner: str,
    reason: str = "",
    batch: dict[str, Any] | None = None,
    duplicate_of: int | None = None,
) -> Event:
    """Say "not now" to a proposal: the node stays in memory, unreviewed again (an agent may
    propose it again, and the queue then shows this decline). Writes one declined event naming
    the proposal it answers. Refuses (Forbidden) an agent actor, (NotFound) an unknown node,
    (Conflict) a node that is not proposed -- re-checked under the write lock. `batch`: the
    detail of the bulk act this decline is part of (memory.batches.tag). `duplicate_of`: the
    node it repeats, recorded as the event's related node and detail["duplicate_of"] (so a
    re-proposal shows it); refused (Invalid) if it is the node itself, (NotFound) if it is
    unknown or sealed, (Conflict) if it is rejected (a tombstone is named nowhere)."""
    owner = _owner(owner)
    label, extra = _short(_reason(reason))
    with transaction.atomic():
        node = node_in_domains(node_id)
        _check(can_decline(node, trust_of(node.pk)))
        same = _duplicate(node, duplicate_of) if duplicate_of is not None else None
        proposal = node.events.filter(kind=EventKind.PROPOSED).order_by("-at", "-id").first()
        return _record(
            EventKind.DECLINED,
            node=node,
            actor=owner,
            reason=label,
            related_node=same,
            detail={
                "proposal": proposal.pk if proposal else None,
                "proposer": proposal.actor if proposal else "",
                **({"duplicate_of": same.pk} if same else {}),
                **extra,
                **(batch or {}),
            },
        )


def _duplicate(node: Node, other_id: int) -> Node:
    """The node a decline says `node` repeats, under the decline's lock."""
    if other_id == node.pk:
        raise Invalid("a node is not a duplicate of itself", code="self_duplicate")
    other = node_in_domains(other_id)
    trust = trust_of(other.pk)
    if trust == Trust.SEALED:
        raise NotFound(f"node {other_id} not found")
    if trust == Trust.REJECTED:
        raise Conflict(f"node {other_id} is rejected: it cannot be named", code="is_rejected")
    return other


def undo_decline(declined: Event, *, owner: str, batch: dict[str, Any]) -> Event | None:
    """Undo one decline of a bulk act: the node is proposed again by the same proposal (a
    proposed event by the owner, reason batch_undone, naming the proposal and its proposer, so
    the queue shows the agent's proposal as before). Leaves the node as it is (None) when a
    later act decided on it: proposed, declined, rooted, superseded, sealed or rejected since."""
    owner = _owner(owner)
    with transaction.atomic():
        node = node_in_domains(declined.node_id)
        later = node.events.filter(pk__gt=declined.pk, kind__in=CEREMONY_EVENT_KINDS)
        if later.exists():
            return None
        return _record(
            EventKind.PROPOSED,
            node=node,
            actor=owner,
            reason=UNDONE_REASON,
            detail={
                "proposal": declined.detail.get("proposal"),
                "proposer": declined.detail.get("proposer", ""),
                **batch,
            },
        )


def asks_ground_confirmation(node_id: int) -> bool:
    """Whether rejecting this node needs the owner's second confirmation: it is ground, sealed
    or not (a seal hides trust, it does not lift what an act on it asks)."""
    return trust_beneath_seal([node_id])[node_id] == Trust.GROUND


def reject(node_id: int, *, owner: str, reason: str, ground_confirmed: bool = False) -> Event:
    """Reject a node as false: its content becomes a tombstone that write_node refuses on
    re-arrival (same domain, same content_key), and every other node carrying that content key
    in the domain, whatever its kind or jurisdiction, live or decayed, is rejected with it, each
    with its own event naming the node rejected (twin_of). Ground is corrected by supersede, so
    a ground node (sealed or not, the node or a twin) is rejected only with `ground_confirmed`
    (the owner's second confirmation). Refuses (Forbidden) an agent actor, (Invalid) an empty
    reason, (NotFound) an unknown node, (Conflict) a node already rejected, or ground without
    ground_confirmed."""
    owner = _owner(owner)
    label, extra = _short(_reason(reason, required=True))
    with transaction.atomic():
        node = node_in_domains(node_id)
        if node.events.filter(kind=EventKind.REJECTED).exists():
            raise Conflict(f"node {node.pk} is already rejected", code="is_rejected")
        twins = list(
            Node.objects.filter(content_key=node.content_key, domain=node.domain)
            .exclude(pk=node.pk)
            .exclude(events__kind=EventKind.REJECTED)
            .order_by("pk")
        )
        beneath = trust_beneath_seal([node.pk, *(t.pk for t in twins)])
        if not ground_confirmed and (
            ground := [pk for pk, trust in beneath.items() if trust == Trust.GROUND]
        ):
            which = f"node {node.pk} is" if node.pk in ground else f"its twin node {ground[0]} is"
            raise Conflict(
                f"{which} ground: correct it by superseding it, or confirm twice that it is false",
                code="is_ground",
            )
        event = _record(
            EventKind.REJECTED,
            node=node,
            actor=owner,
            reason=label,
            detail={"body_hash": node.body_hash, "content_key": node.content_key, **extra},
        )
        for twin in twins:
            _record(
                EventKind.REJECTED,
                node=twin,
                actor=owner,
                reason=label,
                related_node=node,
                detail={
                    "body_hash": twin.body_hash,
                    "content_key": twin.content_key,
                    "twin_of": node.pk,
                    **extra,
                },
            )
        return event
