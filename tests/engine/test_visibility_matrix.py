"""Every visibility rule on every path that applies it (issue 16, STYLE.md item 22).

One subject node is seen on a path, a rule is applied (or the caller changes), and the subject
must be gone from that path. The before-check makes each cell able to fail. Superseded nodes are
hidden from recall but labelled where a caller names them by id (read, walk, authority).
MCP (one slow session) is in tests/agents/test_mcp_visibility.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from memory.authority import authority_report
from memory.errors import NotFound
from memory.forgetting import let_go
from memory.models import Node, Vector
from memory.read import read
from memory.recall import recall
from memory.vectors.embed import embed_missing
from memory.walk import around, open_walk, read_ticket, step
from review.ceremony import reject, seal
from tests._helpers.acts import root_as_owner, supersede_as_owner
from tests._helpers.agents import Agent, make_agent
from tests._helpers.rules import RULES

SUBJECT = "Zephyrine cormorant ledger keeps the spare fuses for Ottoline Brackwater."
SUBJECT_QUERY = "zephyrine cormorant ledger"
HIT = "The attic hatch key hangs by the boiler."
HIT_QUERY = "attic hatch key"
# Names the subject's entity (Ottoline Brackwater) and shares no word with the subject's query.
SEEKER = "The periwinkle trowel went back to Ottoline Brackwater."
SEEKER_QUERY = "periwinkle trowel"
# Two replies away from the subject (responds_to twice) and sharing no word with either query.
CHAIN_END = "The lantern oil sits on the porch shelf."
CHAIN_QUERY = "lantern oil porch"
BETWEEN = "Noted, I will look tonight."
# A turn signed by the speaker the vector_named query names: the word list finds it by the name.
SPEAKER = "Quillon here, back from the coast at last."
SPEAKER_NAME = "Quillon"
HOLDER = "agent:scout"
STATE_RULES = ("decayed", "sealed", "rejected")


@dataclass
class World:
    """The subject (domain work, written now) and a hit (personal, a day old) that cites it."""

    subject: Node
    hit: Node
    client: Any
    monkeypatch: pytest.MonkeyPatch
    make: Callable[..., Node]
    agents: dict[tuple[str, ...], Agent] = field(default_factory=dict)

    def agent(self, domains: list[str]) -> Agent:
        key = tuple(domains)
        if key not in self.agents:
            self.agents[key] = make_agent(self.client, name=f"scout{len(self.agents)}", domains=key)
        return self.agents[key]

    def owner(self) -> Client:
        """A second client, signed in as the owner (the agents' client carries no session)."""
        from dashboard.owner import ensure_owner

        owner = Client()
        owner.force_login(ensure_owner())
        return owner


EVERYONE = {"domains": ["personal", "work"], "as_of": None}


@pytest.fixture
def world(make_note, root_note, client, monkeypatch) -> World:
    subject = make_note(SUBJECT, domain="work")
    hit = make_note(
        HIT,
        days_old=1,
        origins=[
            {"id": root_note.pk, "relation": "derived_from"},
            {"id": subject.pk, "relation": "cites"},
        ],
    )
    return World(subject, hit, client, monkeypatch, make_note)


def hide(rule: str, world: World) -> dict[str, Any]:
    """Apply `rule` to the subject; returns how the caller changes (domain and as-of rules)."""
    node = world.subject
    if rule == "domain":
        return {"domains": ["personal"]}
    if rule == "as_of":
        return {"as_of": (node.created_at - timedelta(seconds=1)).isoformat()}
    if rule == "decayed":
        let_go(node.pk, actor="owner")
    elif rule == "sealed":
        seal(node.pk, owner="owner", reason="private")
    elif rule == "rejected":
        reject(node.pk, owner="owner", reason="wrong")
    elif rule == "superseded":
        root_as_owner(node)
        supersede_as_owner(Node.objects.get(pk=node.pk), "The fuse box moved to the cellar.")
    return {}


def _find(results: list[dict[str, Any]], node_id: int) -> str | None:
    return next((p["trust"] for p in results if p["id"] == node_id), None)


# --- Paths: each returns the subject's trust as that path shows it, or None when hidden ----------


def full_text(world: World, domains: list[str], as_of: str | None) -> str | None:
    assert not Vector.objects.exists()  # no embeddings: only the full-text list can find it
    found = recall(SUBJECT_QUERY, scope="both", domains=domains, as_of=as_of)
    return _find(found, world.subject.pk)


def vector(world: World, domains: list[str], as_of: str | None) -> str | None:
    import memory.recall as recall_module
    import memory.recall.rank as rank_module

    embed_missing()
    assert Vector.objects.filter(node=world.subject).exists()
    with world.monkeypatch.context() as patch:
        # Only the vector path can find it: the word, substring and date lists say nothing.
        for name in ("fts_candidates", "trigram_candidates", "date_candidates"):
            patch.setattr(rank_module, name, lambda *args, **kwargs: [])
        found = recall_module.recall(SUBJECT_QUERY, scope="both", domains=domains, as_of=as_of)
    return _find(found, world.subject.pk)


def vector_named(world: World, domains: list[str], as_of: str | None) -> str | None:
    """The query names a speaker: the word lists find only the speaker's turn (so the name is
    known), and the subject can come only from the vector list, asked the query without the
    name (memory.recall.gather.without_names)."""
    import memory.recall as recall_module
    import memory.recall.rank as rank_module

    if not Node.objects.filter(body=SPEAKER).exists():
        world.make(SPEAKER, days_old=1, signature=SPEAKER_NAME)
    embed_missing()
    words, search = rank_module.fts_candidates, recall_module.vector_search
    asked: list[str] = []
    with world.monkeypatch.context() as patch:
        patch.setattr(
            rank_module,
            "fts_candidates",
            lambda *args, **kwargs: [h for h in words(*args, **kwargs) if h[0] != world.subject.pk],
        )
        for name in ("trigram_candidates", "date_candidates"):
            patch.setattr(rank_module, name, lambda *args, **kwargs: [])
        patch.setattr(
            recall_module,
            "vector_search",
            lambda text, *args: asked.append(text) or search(text, *args),
        )
        query = f"{SPEAKER_NAME} {SUBJECT_QUERY}"
        found = recall_module.recall(query, scope="both", domains=domains, as_of=as_of)
    assert asked == [SUBJECT_QUERY]  # the name-less vector path
    return _find(found, world.subject.pk)


def expansion(world: World, domains: list[str], as_of: str | None) -> str | None:
    """The query finds only the hit; the subject can come back only as its lifted neighbour."""
    found = recall(HIT_QUERY, scope="both", domains=domains, as_of=as_of)
    assert _find(found, world.hit.pk) is not None
    return _find(found, world.subject.pk)


def entity(world: World, domains: list[str], as_of: str | None) -> str | None:
    """The query finds only the seeker (personal, a day old); the subject can come back only
    through the entity both name, with the entity expansion switched on (memory.recall.rank)."""
    from memory.recall import rank
    from memory.recall.entities import record_mentions

    if not Node.objects.filter(body=SEEKER).exists():
        world.make(SEEKER, days_old=1)
    record_mentions(after_id=0, limit=None)  # sleep's step; a node's rows are written once
    with rank.using(entity=1.0):
        found = recall(SEEKER_QUERY, scope="both", domains=domains, as_of=as_of)
    assert [p["id"] for p in found][:1] == list(
        Node.objects.filter(body=SEEKER).values_list("id", flat=True)
    )
    return _find(found, world.subject.pk)


def _seeker(world: World) -> int:
    from memory.recall.entities import record_mentions

    if not Node.objects.filter(body=SEEKER).exists():
        world.make(SEEKER, days_old=1)
    record_mentions(after_id=0, limit=None)  # sleep's step; a node's rows are written once
    return Node.objects.get(body=SEEKER).pk


def second_words(world: World, domains: list[str], as_of: str | None) -> str | None:
    """The query finds only the seeker; the subject can come back only through the second
    step's words (the name the seeker mentions, searched again: memory.recall.rank)."""
    from memory.recall import rank

    seeker = _seeker(world)
    assert _find(recall(SEEKER_QUERY, scope="both", domains=domains), world.subject.pk) is None
    with rank.using(second_words=1.0, second_seeds=1):
        found = recall(SEEKER_QUERY, scope="both", domains=domains, as_of=as_of)
    assert _find(found, seeker) is not None
    return _find(found, world.subject.pk)


def second_meaning(world: World, domains: list[str], as_of: str | None) -> str | None:
    """Vectors only: the query's vector finds the seeker, not the subject; the subject can come
    back only as near the query with the seeker (the second step's meaning list)."""
    import memory.recall.rank as rank_module

    seeker = _seeker(world)
    embed_missing()
    with world.monkeypatch.context() as patch:
        for name in ("fts_candidates", "trigram_candidates", "date_candidates"):
            patch.setattr(rank_module, name, lambda *args, **kwargs: [])
        first = recall(SEEKER_QUERY, scope="both", domains=domains)
        assert _find(first, world.subject.pk) is None
        with rank_module.using(second_meaning=1.0, second_seeds=1):
            found = recall(SEEKER_QUERY, scope="both", domains=domains, as_of=as_of)
    assert _find(found, seeker) is not None
    return _find(found, world.subject.pk)


def gathered(world: World, domains: list[str], as_of: str | None) -> str | None:
    """The query finds only the chain's end; the subject is two turns up the chain, reached
    only with WEIGHTS.reach 2 or more (memory.recall.gather.chain), the session lift and diversity
    on too (they reorder, never admit)."""
    from memory.recall import rank

    if not Node.objects.filter(body=CHAIN_END).exists():
        between = world.make(
            BETWEEN, days_old=1, origins=[{"id": world.subject.pk, "relation": "responds_to"}]
        )
        world.make(CHAIN_END, days_old=1, origins=[{"id": between.pk, "relation": "responds_to"}])
    end = Node.objects.get(body=CHAIN_END)
    with rank.using(reach=1):
        one = recall(CHAIN_QUERY, scope="both", domains=domains, as_of=as_of)
    assert _find(one, world.subject.pk) is None  # one hop does not reach it
    with rank.using(reach=3, session=1.0, diversity=0.5):
        found = recall(CHAIN_QUERY, scope="both", domains=domains, as_of=as_of)
    assert [p["id"] for p in found][:1] == [end.pk]
    return _find(found, world.subject.pk)


def reading(world: World, domains: list[str], as_of: str | None) -> str | None:
    try:
        return read(world.subject.pk, domains=domains, as_of=as_of)["trust"]
    except NotFound:
        return None


def walk_open(world: World, domains: list[str], as_of: str | None) -> str | None:
    try:
        ticket = open_walk(world.subject.pk, holder=HOLDER, domains=domains, as_of=as_of)
    except NotFound:
        return None
    return around(ticket, holder=HOLDER)["node"]["trust"]


def walk_around(world: World, domains: list[str], as_of: str | None) -> str | None:
    ticket = open_walk(world.hit.pk, holder=HOLDER, domains=domains, as_of=as_of)
    routes = around(ticket, holder=HOLDER)["routes"]
    return next((r["preview"]["trust"] for r in routes if r["target"] == world.subject.pk), None)


def authority_origins(world: World, domains: list[str], as_of: str | None) -> str | None:
    report = authority_report(world.hit.pk, domains=domains, as_of=as_of)
    return _find(report["origins"], world.subject.pk)


def _api(world: World, domains: list[str], path: str, **params: Any):
    query = {k: v for k, v in params.items() if v is not None}
    return world.agent(domains).get(path, query)


def api_recall(world: World, domains: list[str], as_of: str | None) -> str | None:
    response = _api(world, domains, "recall", q=SUBJECT_QUERY, scope="both", as_of=as_of)
    assert response.status_code == 200
    return _find(response.json()["results"], world.subject.pk)


def api_expansion(world: World, domains: list[str], as_of: str | None) -> str | None:
    response = _api(world, domains, "recall", q=HIT_QUERY, scope="both", as_of=as_of)
    assert _find(response.json()["results"], world.hit.pk) is not None
    return _find(response.json()["results"], world.subject.pk)


def _api_node(world: World, domains: list[str], path: str, as_of: str | None) -> str | None:
    response = _api(world, domains, path.format(id=world.subject.pk), as_of=as_of)
    if response.status_code == 404:
        return None
    assert response.status_code == 200, response.content
    return response.json()["trust"]


def api_read(world: World, domains: list[str], as_of: str | None) -> str | None:
    return _api_node(world, domains, "nodes/{id}", as_of)


def api_authority(world: World, domains: list[str], as_of: str | None) -> str | None:
    return _api_node(world, domains, "nodes/{id}/authority", as_of)


def api_walk(world: World, domains: list[str], as_of: str | None) -> str | None:
    agent = world.agent(domains)
    opened = agent.post("walk/open", {"node_id": world.hit.pk, "as_of": as_of})
    assert opened.status_code == 200, opened.content
    routes = agent.post("walk/around", {"ticket": opened.json()["ticket"]}).json()["routes"]
    return next((r["preview"]["trust"] for r in routes if r["target"] == world.subject.pk), None)


def _owner_search(world: World, domains: list[str], as_of: str | None, q: str) -> str | None:
    from django.urls import reverse

    domain = "personal" if domains == ["personal"] else ""
    params = {"q": q, "scope": "both", "domain": domain, "as_of": as_of or ""}
    response = world.owner().get(reverse("search"), params)
    assert response.status_code == 200
    return "shown" if reverse("node", args=[world.subject.pk]) in response.text else None


def owner_search(world: World, domains: list[str], as_of: str | None) -> str | None:
    return _owner_search(world, domains, as_of, SUBJECT_QUERY)


def owner_search_expansion(world: World, domains: list[str], as_of: str | None) -> str | None:
    return _owner_search(world, domains, as_of, HIT_QUERY)


PATHS: dict[str, Callable[[World, list[str], str | None], str | None]] = {
    "full_text": full_text,
    "vector": vector,
    "vector_named": vector_named,
    "expansion": expansion,
    "entity": entity,
    "gathered": gathered,
    "second_words": second_words,
    "second_meaning": second_meaning,
    "read": reading,
    "walk_open": walk_open,
    "walk_around": walk_around,
    "authority_origins": authority_origins,
    "api_recall": api_recall,
    "api_expansion": api_expansion,
    "api_read": api_read,
    "api_authority": api_authority,
    "api_walk": api_walk,
    "owner_search": owner_search,
    "owner_search_expansion": owner_search_expansion,
}
# Paths that answer by id: a superseded node stays there, labelled (DESIGN.md, Recall and read).
LABELLING = {"read", "walk_open", "walk_around", "authority_origins", "api_read", "api_authority"}
LABELLING |= {"api_walk"}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("rule", RULES)
def test_each_rule_hides_the_subject_on_each_path(world: World, rule: str, path: str) -> None:
    look = PATHS[path]
    before = look(world, **EVERYONE)
    assert before is not None and before != "superseded"
    after = look(world, **{**EVERYONE, **hide(rule, world)})
    if rule == "superseded" and path in LABELLING:
        assert after == "superseded"
    else:
        assert after is None


@pytest.mark.parametrize("rule", STATE_RULES)
def test_a_ticket_held_before_the_rule_can_neither_step_nor_read(world: World, rule: str) -> None:
    domains = EVERYONE["domains"]
    tickets = [open_walk(world.hit.pk, holder=HOLDER, domains=domains) for _ in range(2)]
    routes = [around(t, holder=HOLDER)["routes"] for t in tickets]
    direction = next(r["direction"] for r in routes[0] if r["target"] == world.subject.pk)
    at_subject = open_walk(world.subject.pk, holder=HOLDER, domains=domains)
    assert read_ticket(at_subject, holder=HOLDER)["body"] == SUBJECT
    assert step(tickets[0], holder=HOLDER, direction=direction, target=world.subject.pk)
    hide(rule, world)
    with pytest.raises(NotFound):
        step(tickets[1], holder=HOLDER, direction=direction, target=world.subject.pk)
    with pytest.raises(NotFound):
        read_ticket(at_subject, holder=HOLDER)
    with pytest.raises(NotFound):
        around(at_subject, holder=HOLDER)


@pytest.mark.parametrize("rule", ["sealed", "rejected"])
def test_authority_shows_no_words_of_a_sealed_or_rejected_node(world: World, rule: str) -> None:
    assert authority_report(world.subject.pk)["excerpt"] == SUBJECT
    hide(rule, world)
    report = authority_report(world.subject.pk)
    assert SUBJECT not in str(report) and report["trust"] == rule
    if rule == "sealed":
        assert set(report) == {"id", "trust"}


def test_authority_as_of_before_a_seal_shows_no_sealed_words(world: World) -> None:
    """Sealing hides the words from every past view too (DESIGN.md, as_of)."""
    from django.utils import timezone

    then = timezone.now().isoformat()  # after the cites edge was written, before the seal
    origins = authority_report(world.hit.pk, as_of=then)["origins"]
    assert SUBJECT in str(origins) and SUBJECT in str(authority_report(world.subject.pk))
    hide("sealed", world)
    assert SUBJECT not in str(authority_report(world.subject.pk, as_of=then))
    assert SUBJECT not in str(authority_report(world.hit.pk, as_of=then)["origins"])


# --- The owner's node page: the owner sees every domain, and decayed or rejected nodes marked ---


def _page(world: World, node: Node, as_of: str | None = None):
    from django.urls import reverse

    return world.owner().get(reverse("node", args=[node.pk]), {"as_of": as_of or ""})


@pytest.mark.parametrize(
    ("rule", "status", "mark"),
    [
        ("as_of", 404, "did not exist yet"),
        ("decayed", 200, "Decayed."),
        ("sealed", 200, "This node is sealed"),
        ("rejected", 200, "Rejected."),
        ("superseded", 200, 'id="node-trust">superseded<'),
    ],
)
def test_the_node_page_applies_each_rule(world: World, rule: str, status: int, mark: str) -> None:
    shown = _page(world, world.subject)
    assert shown.status_code == 200 and SUBJECT in shown.text and mark not in shown.text
    assert Node.objects.get(pk=world.subject.pk).access_count == 0  # inspection is not a read
    page = _page(world, world.subject, hide(rule, world).get("as_of"))
    assert page.status_code == status and mark in page.text
    assert Node.objects.get(pk=world.subject.pk).access_count == 0
    if rule == "sealed":
        assert SUBJECT not in page.text and world.subject.body_hash not in page.text


def test_a_neighbours_page_shows_no_sealed_words_now_or_as_of_before_the_seal(world) -> None:
    from django.utils import timezone

    then = timezone.now().isoformat()  # after the cites edge was written, before the seal
    assert SUBJECT in _page(world, world.hit).text and SUBJECT in _page(world, world.hit, then).text
    hide("sealed", world)
    assert SUBJECT not in _page(world, world.hit).text
    assert SUBJECT not in _page(world, world.hit, then).text
