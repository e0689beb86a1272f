"""The agents' door: scoped operations, shared by the JSON views (agents/views.py) and MCP.

Every operation takes the caller's ApiToken and enforces its scope itself, so the HTTP views and
the MCP tools (agents/mcp_server.py) share one set of rules:
- reads see only the token's domains; a node outside them is NotFound (404), never Forbidden, so
  an agent learns nothing about what lies outside its scope (sealed and rejected nodes likewise);
- writes go to the token's first domain unless another of its domains is named; a domain outside
  the token is Forbidden (403); a read-only token may not write or propose (403);
- agents may propose, never root, supersede, seal, unseal or reject: those acts have no operation
  here, only explicit refusals (403 owner_only) so the door's shape is visible and tested;
- questions (memory/questions.py) are asked, fed, answered and reopened under the same rules: the
  question lands in the token's write domain, links join nodes the token can see, and answering
  links an answer, it never roots anything.
Nothing partial is stored on any refusal: validation precedes the write path, which is atomic.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db.models.functions import Length
from django.utils import timezone

from agents import params
from memory import inputs, questions
from memory import walk as walks
from memory.authority import authority_report
from memory.errors import Forbidden, Invalid, NotFound
from memory.extract import extract
from memory.models import ApiToken, Kind, Node
from memory.read import read, visible_node
from memory.recall import recall
from memory.recall.dig import dig, dug_recently, forgotten_matches, other_scopes, revive_dug
from memory.scroll import commit_turn as scroll_commit
from memory.tokens import actor_of, count_write
from memory.trust import trust_map
from memory.visibility import MAX_ID, Visibility, visible_ids
from memory.write import WriteResult, write_node
from review.ceremony import propose as ceremony_propose
from review.queue import waiting

MAX_RECALL_LIMIT = 100
DEFAULT_CONTEXT_BUDGET = 2000
MAX_CONTEXT_BUDGET = 50_000
CHARS_PER_TOKEN = 4
OWNER_ONLY_ACTS = ("root", "supersede", "seal", "unseal", "reject")
NODE_FIELDS = frozenset(
    {
        "body",
        "kind",
        "jurisdiction",
        "signature",
        "origins",
        "source",
        "domain",
        "referent_time",
        "metadata",
    }
)
TURN_FIELDS = frozenset(
    {"conversation", "user", "assistant", "referent_time", "domain", "signature"}
)
QUESTION_FIELDS = frozenset({"body", "about", "domain"})
QUESTION_LINK_FIELDS = frozenset({"node"})


# --- scope ---------------------------------------------------------------------------------


def _require_writable(token: ApiToken) -> None:
    """Every write's gate, at both doors: a read-only token is refused, and a write over the
    token's limit for this minute (memory.tokens.count_write, RateLimited: 429)."""
    if token.read_only:
        raise Forbidden(f"token {token.name!r} is read-only", code="read_only")
    count_write(token)


def _write_domain(token: ApiToken, domain: Any) -> str:
    """The domain a write lands in: the token's first unless another of its own is named."""
    if domain is None or domain == "":
        first: str = token.domains[0]
        return first
    if not isinstance(domain, str) or domain not in token.domains:
        raise Forbidden(
            f"domain {domain!r} is not allowed for this token (allowed: "
            f"{', '.join(token.domains)})",
            code="domain_not_allowed",
        )
    return domain


def _read_domains(token: ApiToken, requested: list[str] | None) -> list[str]:
    """The domains a read may see: the token's, narrowed to those requested. Asking for a
    domain outside the token simply finds nothing there (it is not disclosed as forbidden)."""
    if not requested:
        return list(token.domains)
    return [d for d in token.domains if d in requested]


def _visible_ids(token: ApiToken, ids: set[int]) -> set[int]:
    return visible_ids(ids, domains=token.domains)


def _visible_node(token: ApiToken, node_id: int) -> int:
    if node_id not in _visible_ids(token, {node_id}):
        raise NotFound(f"no node {node_id}")
    return node_id


def _check_origins(token: ApiToken, origins: Any) -> None:
    """Origins must be nodes the token can see; any other id is 'unknown', exactly as a missing
    one would be, so naming ids cannot probe another domain. Malformed entries are left to the
    write path, which refuses them with its own message."""
    if origins is None:
        return
    if not isinstance(origins, list):
        raise Invalid("origins must be a list of {id, relation}", code="bad_origin")
    ids: set[int] = set()
    for origin in origins:
        if isinstance(origin, Mapping) and (number := inputs.any_whole_number(origin.get("id"))):
            ids.add(number)
    if missing := sorted(ids - _visible_ids(token, ids)):
        raise Invalid(f"unknown origin node(s): {missing}", code="unknown_origin")


def _written(result: WriteResult) -> tuple[int, dict[str, Any]]:
    node = result.node
    return (201 if result.created else 200), {
        "id": node.pk,
        "body_hash": node.body_hash,
        "status": result.status,
        "jurisdiction": node.jurisdiction,
        "kind": node.kind,
        "domain": node.domain,
        "created_at": node.created_at,
    }


# --- operations (shared with the MCP tools) --------------------------------------------------


def remember(token: ApiToken, data: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
    """Write one node through the write path, in the token's scope.

    Reads the store clock (created_at). Refuses read-only tokens and foreign domains (Forbidden),
    unknown fields, unseen origins and everything the write path refuses (Invalid, Conflict for
    tombstoned content, TooLarge).
    """
    params.check_text(data)
    _require_writable(token)
    params.check_fields(data, allowed=NODE_FIELDS, required=("body", "kind", "jurisdiction"))
    domain = _write_domain(token, data.get("domain"))
    _check_origins(token, data.get("origins"))
    metadata = params.mapping(data, "metadata")
    source = params.optional_text(data, "source")
    result = write_node(
        body=data["body"],
        kind=data["kind"],
        jurisdiction=data["jurisdiction"],
        signature=params.optional_text(data, "signature"),
        origins=data.get("origins") or [],
        source=source,
        domain=domain,
        referent_time=data.get("referent_time"),
        metadata=metadata,
        actor=actor_of(token),
        token=token,
    )
    return _written(result)


def commit_turn(token: ApiToken, data: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
    """Commit one user/assistant exchange to the conversation's scroll as a pair.

    Reads the store clock. Refuses read-only tokens and foreign domains (Forbidden), missing or
    non-text fields and naive referent times (Invalid).
    """
    params.check_text(data)
    _require_writable(token)
    params.check_fields(data, allowed=TURN_FIELDS, required=("conversation", "user", "assistant"))
    domain = _write_domain(token, data.get("domain"))
    actor = actor_of(token)
    result = scroll_commit(
        conversation=params.text(data, "conversation"),
        user=params.text(data, "user"),
        assistant=params.text(data, "assistant"),
        signature=params.optional_text(data, "signature", default=actor),
        domain=domain,
        referent_time=data.get("referent_time"),
        holder=actor,
        token=token,
    )
    return _written(result)


def recall_packets(
    token: ApiToken,
    *,
    q: Any,
    scope: Any = None,
    domain: Any = None,
    limit: Any = None,
    as_of: Any = None,
    why: Any = None,
) -> dict[str, Any]:
    """Previews (never bodies) for a query, in the token's domains, and forgotten_matches: how
    many decayed nodes the token may see also matched (a dig would find them), and
    other_scopes: how many live ones each scope not searched holds ({"wild": 40} for home).
    Logged by recall; does not count as reading. With `why`, each packet says briefly why it
    is there. Refuses (Invalid) an empty query, a bad scope, limit, as_of or why."""
    params.check_text([q, scope, domain, limit, as_of, why])
    if not isinstance(q, str) or not q.strip():
        raise Invalid("q (the query) is required", code="missing_field")
    scope = params.scope(scope)
    limit = params.integer(limit, name="limit", low=1, high=MAX_RECALL_LIMIT, default=10)
    when = params.as_of(as_of)
    explain = params.flag(why, name="why")
    domains = _read_domains(token, params.domains_param(domain))
    if not domains:
        # Never hand recall an empty list: it must not be mistaken for "every domain".
        return {"results": [], "forgotten_matches": 0, "other_scopes": {}}
    results = recall(
        q,
        scope=scope,
        domains=domains,
        limit=limit,
        as_of=when,
        actor=actor_of(token),
        why=explain,
        token=token,
    )
    return {
        "results": results,
        "forgotten_matches": forgotten_matches(q, scope=scope, domains=domains),
        "other_scopes": other_scopes(q, scope=scope, domains=domains, as_of=when),
    }


def dig_packets(
    token: ApiToken,
    *,
    q: Any,
    scope: Any = None,
    domain: Any = None,
    limit: Any = None,
    why: Any = None,
) -> dict[str, Any]:
    """Previews of decayed nodes for a query, in the token's domains, each saying when and why
    it decayed (memory.recall.dig). Logged as a dig; brings nothing back: reading one of these
    ids within a day (read_node) does. Refuses (Invalid) what recall_packets refuses."""
    params.check_text([q, scope, domain, limit, why])
    if not isinstance(q, str) or not q.strip():
        raise Invalid("q (the query) is required", code="missing_field")
    scope = params.scope(scope)
    limit = params.integer(limit, name="limit", low=1, high=MAX_RECALL_LIMIT, default=10)
    explain = params.flag(why, name="why")
    domains = _read_domains(token, params.domains_param(domain))
    if not domains:
        return {"results": []}
    results = dig(
        q,
        scope=scope,
        domains=domains,
        limit=limit,
        actor=actor_of(token),
        why=explain,
        token=token,
    )
    return {"results": results}


def read_node(token: ApiToken, node_id: int, *, as_of: Any = None) -> dict[str, Any]:
    """The full body of one node in the token's domains; counts as an access (read clock: store).

    A decayed node this token dug up within a day (memory.recall.dig.DUG_WINDOW) is brought back
    first, with what it holds (revived, dug_and_read): reading what a dig found is use. Refuses
    (NotFound) anything outside the token's domains, sealed or rejected, and a decayed node the
    token did not dig up: read's own check, the one every by-id operation takes (_readable), so
    it is the same answer, after the same queries, as for a missing id."""
    actor = actor_of(token)
    when = params.as_of(as_of)
    if when is None:
        # Both questions are asked of every id, so a decayed id costs what a missing one does.
        decayed = Node.objects.filter(pk=node_id, decayed_at__isnull=False).exists()
        if dug_recently(actor, node_id) and decayed:
            revive_dug(node_id, actor=actor)
    # holder: a wild body the agent reads is cited by its next turn (custody of what it saw).
    return read(
        node_id, domains=list(token.domains), actor=actor, as_of=when, holder=actor, token=token
    )


def _readable(token: ApiToken, node_id: int, *, as_of: datetime | None = None) -> None:
    """Refuse (NotFound) what read would refuse: outside the token's domains, decayed (now, or
    as of as_of), sealed or rejected. An agent learns no more about a node by id than read says."""
    visible_node(node_id, vis=Visibility.of(domains=token.domains, scope="both", as_of=as_of))


def authority(token: ApiToken, node_id: int, *, as_of: Any = None) -> dict[str, Any]:
    """Who decided what about a node (its authority events and derived trust). Refuses
    (NotFound) what read refuses (_readable), so authority never says more than read would."""
    when = params.as_of(as_of)
    _readable(token, node_id, as_of=when)
    return authority_report(node_id, domains=list(token.domains), as_of=when)


def propose(token: ApiToken, node_id: int, data: Mapping[str, Any]) -> dict[str, Any]:
    """Propose a node for rooting (the owner decides). Refuses read-only tokens (Forbidden) and
    nodes the token cannot see (NotFound); the ceremony refuses the rest."""
    params.check_text(data)
    _require_writable(token)
    params.check_fields(data, allowed=frozenset({"reason"}), required=())
    reason = params.optional_text(data, "reason")
    _readable(token, node_id)  # a decayed node is 404 here too, as for read and authority
    ceremony_propose(
        node_id, actor=actor_of(token), reason=reason, domains=list(token.domains), token=token
    )
    return {"id": node_id, "trust": trust_map([node_id])[node_id]}


def extract_part(
    token: ApiToken, node_id: int, data: Mapping[str, Any]
) -> tuple[int, dict[str, Any]]:
    """Make the verbatim span body[start:end] of a visible node a node of its own (memory/
    extract.py), signed by the agent unless it names a signature. Refuses read-only tokens
    (Forbidden), unseen nodes (NotFound), bad spans (Invalid) and rejected words (Conflict)."""
    params.check_text(data)
    _require_writable(token)
    params.check_fields(
        data, allowed=frozenset({"start", "end", "signature"}), required=("start", "end")
    )
    signature = params.optional_text(data, "signature", default=actor_of(token))
    _readable(token, node_id)  # a span is read from the body: refused as read would refuse it
    result = extract(
        node_id,
        start=data["start"],
        end=data["end"],
        signature=signature,
        actor=actor_of(token),
        domains=list(token.domains),
        token=token,
    )
    return _written(result)


def walk(token: ApiToken, action: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """One walk move: open (node_id, scope?, as_of?) -> ticket; around (ticket) -> routes;
    step (ticket, direction, target) -> new ticket; read (ticket) -> body.

    Tickets are held by the token's actor; the walk refuses forged, spent, expired or mismatched
    tickets and unseen nodes with its own errors."""
    params.check_text(data)
    holder = actor_of(token)
    if action == "open":
        params.check_fields(
            data, allowed=frozenset({"node_id", "scope", "as_of"}), required=("node_id",)
        )
        node_id = params.integer(data.get("node_id"), name="node_id", low=1, high=MAX_ID, default=0)
        ticket = walks.open_walk(
            node_id,
            holder=holder,
            domains=list(token.domains),
            as_of=params.as_of(data.get("as_of")),
            scope=data.get("scope") or "both",
        )
        return {"ticket": ticket}
    if action == "step":
        params.check_fields(
            data,
            allowed=frozenset({"ticket", "direction", "target"}),
            required=("ticket", "direction", "target"),
        )
        target = params.integer(data.get("target"), name="target", low=1, high=MAX_ID, default=0)
        ticket = walks.step(
            params.text(data, "ticket"),
            holder=holder,
            direction=params.text(data, "direction"),
            target=target,
        )
        return {"ticket": ticket}
    params.check_fields(data, allowed=frozenset({"ticket"}), required=("ticket",))
    if action == "around":
        return walks.around(params.text(data, "ticket"), holder=holder)
    if action == "read":
        return walks.read_ticket(params.text(data, "ticket"), holder=holder, agent=token)
    raise Invalid(f"unknown walk action {action!r}", code="bad_action")


def context(
    token: ApiToken,
    *,
    q: Any,
    budget: Any = None,
    scope: Any = None,
    domain: Any = None,
    limit: Any = None,
    as_of: Any = None,
) -> dict[str, Any]:
    """A token-budgeted set of bodies for a query: recall, then read the best results whose
    bodies fit the remaining budget (approx tokens = chars / 4). Each body returned is a read
    and counts as an access; bodies that do not fit are skipped unread (their length is looked
    up, which is not reading). Refuses what recall refuses and a budget out of range."""
    params.check_text([q, budget, scope, domain, limit, as_of])
    budget_tokens = params.integer(
        budget, name="budget", low=1, high=MAX_CONTEXT_BUDGET, default=DEFAULT_CONTEXT_BUDGET
    )
    limit = params.integer(limit, name="limit", low=1, high=MAX_RECALL_LIMIT, default=20)
    packets = recall_packets(token, q=q, scope=scope, domain=domain, limit=limit, as_of=as_of)[
        "results"
    ]
    lengths = dict(
        Node.objects.filter(pk__in=[p["id"] for p in packets])
        .annotate(chars=Length("body"))
        .values_list("pk", "chars")
    )
    items: list[dict[str, Any]] = []
    used, skipped = 0, 0
    for packet in packets:
        cost = -(-lengths.get(packet["id"], 0) // CHARS_PER_TOKEN)
        if used + cost > budget_tokens:
            skipped += 1
            continue
        try:
            node = read_node(token, packet["id"], as_of=as_of)
        except NotFound:
            skipped += 1  # hidden between recall and read (sealed, decayed): not for us
            continue
        used += cost
        items.append(
            {
                "jurisdiction": packet.get("jurisdiction"),
                "id": packet["id"],
                "trust": packet.get("trust"),
                "kind": packet.get("kind"),
                "source": packet.get("source", ""),
                "score": packet.get("score"),
                "tokens": cost,
                "body": node["body"],
            }
        )
    return {"query": q, "budget": budget_tokens, "used": used, "skipped": skipped, "items": items}


# --- questions -------------------------------------------------------------------------------


def _node_id(value: Any, *, name: str) -> int:
    """A node id given in JSON: an integer (not a digit string, not a boolean) in range."""
    if not isinstance(value, int):
        raise Invalid(f"{name} must be a node id (a positive integer)", code="bad_field")
    return inputs.node_id(value, name=name)


def _question(token: ApiToken, question_id: int) -> int:
    _visible_node(token, question_id)
    if not Node.objects.filter(pk=question_id, kind=Kind.QUESTION).exists():
        raise Invalid(f"node {question_id} is not a question", code="not_question")
    return question_id


def _question_state(question_id: int) -> dict[str, Any]:
    return {"question": question_id, "open": questions.is_open(question_id)}


def ask_question(token: ApiToken, data: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
    """Plant a question about nodes the token can see. Refuses read-only tokens and foreign
    domains (403), unseen nodes (404), a missing body or an empty `about` (400)."""
    _require_writable(token)
    params.check_fields(data, allowed=QUESTION_FIELDS, required=("body", "about"))
    about = data.get("about")
    if not isinstance(about, list) or not about:
        raise Invalid("about must be a non-empty list of node ids", code="bad_field")
    ids = {_node_id(value, name="about") for value in about}
    for node_id in sorted(ids - _visible_ids(token, ids)):
        _visible_node(token, node_id)  # raises NotFound, naming the first unseen id
    body = data.get("body")
    if not isinstance(body, str):
        raise Invalid("body must be text", code="bad_field")
    question = questions.plant_question(
        body,
        about=sorted(ids),
        signature=actor_of(token),
        domain=_write_domain(token, data.get("domain")),
    )
    return 201, _question_state(question.pk)


def link_question(
    token: ApiToken, question_id: int, act: str, data: Mapping[str, Any]
) -> dict[str, Any]:
    """Feed, answer or reopen a question with a node (both in the token's domains)."""
    _require_writable(token)
    params.check_fields(data, allowed=QUESTION_LINK_FIELDS, required=("node",))
    node_id = _visible_node(token, _node_id(data.get("node"), name="node"))
    _question(token, question_id)
    actor = actor_of(token)
    if act == "feed":
        questions.feed(question_id, node_id, actor=actor)
    elif act == "answer":
        questions.answer(question_id, node_id, actor=actor)
    else:
        questions.reopen(question_id, actor=actor, by_node_id=node_id)
    return _question_state(question_id)


def open_questions(token: ApiToken, node_id: int) -> dict[str, Any]:
    """Open questions about or fed by a node the token can see (previews only); refuses
    (NotFound) what read refuses, a decayed node included."""
    _readable(token, node_id)
    return {
        "node": node_id,
        "questions": questions.open_questions_near([node_id], domains=list(token.domains)),
    }


def waiting_for_owner(token: ApiToken) -> dict[str, Any]:
    """How much waits for the owner's review in the token's domains, so an agent can say so:
    proposals waiting (those from muted agents among them, waiting aside), how many are this
    token's own, and the oldest one's age in days. Counts only what the token could see: other
    domains' queues are not its business. Reads the audit clock; writes nothing."""
    domains = set(token.domains)
    queue = waiting()
    shown = [item for item in queue.items if item.node.domain in domains]
    aside = [item for item in queue.aside if item.node.domain in domains]
    everything = shown + aside
    mine = sum(1 for item in everything if item.proposal and item.proposal.token_id == token.pk)
    dates = [item.proposal.at for item in everything if item.proposal]
    oldest = (timezone.now() - min(dates)).days if dates else None
    n = len(everything)
    said = f"{n} item{'s' if n != 1 else ''} waiting for your review"
    if oldest:
        said += f", the oldest for {oldest} day{'s' if oldest != 1 else ''}"
    return {
        "waiting": n,
        "in_queue": len(shown),
        "aside": len(aside),
        "yours": mine,
        "oldest_days": oldest,
        "message": said + ".",
    }
