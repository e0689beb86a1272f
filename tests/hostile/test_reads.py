"""The hostile suite, reads: sealed means invisible to recall, authority and the agent API;
recall never carries ceremony detail; trust reads the same in recall packets and everywhere.

Kept apart from test_ways_in.py because it needs memory/recall.py (the recall engineer's).
"""

from __future__ import annotations

import json

from memory.trust import trust_of
from review.ceremony import propose, reject, seal, unseal
from tests._helpers.acts import root_as_owner, supersede_as_owner

OWNER = "owner"


# --- sealed means invisible; recall never carries ceremony detail --------------------------

SECRET = "The quokka vault combination is 4-8-15-16."


def _recall_ids(query: str, **kw) -> list[int]:
    from memory.recall import recall

    return [p["id"] for p in recall(query, **kw)]


def test_a_sealed_node_is_absent_from_recall_and_unseal_restores_it(make_note):
    from memory.recall import recall

    node = make_note(SECRET)
    assert node.pk in _recall_ids("quokka vault")
    seal(node.pk, owner=OWNER)
    results = recall("quokka vault combination", scope="both")
    assert node.pk not in [p["id"] for p in results]
    assert "4-8-15" not in json.dumps(results) and node.body_hash not in json.dumps(results)
    unseal(node.pk, owner=OWNER)
    assert node.pk in _recall_ids("quokka vault")


def test_a_sealed_node_is_absent_from_the_authority_report(make_note):
    from memory.authority import authority_report

    node = make_note(SECRET)
    assert "4-8-15" in json.dumps(authority_report(node.pk))
    seal(node.pk, owner=OWNER)
    report = json.dumps(authority_report(node.pk))
    assert "4-8-15" not in report and node.body_hash not in report


def test_a_sealed_node_is_absent_from_the_agent_api(make_note, client):
    from tests._helpers.agents import make_agent

    node = make_note(SECRET)
    agent = make_agent(client)
    assert "4-8-15" in agent.get(f"nodes/{node.pk}/authority").content.decode()
    assert node.pk in [p["id"] for p in agent.get("recall", {"q": "quokka"}).json()["results"]]
    seal(node.pk, owner=OWNER)
    for response, status in (
        (agent.get(f"nodes/{node.pk}/authority"), 404),
        (agent.get("recall", {"q": "quokka vault", "scope": "both"}), 200),
    ):
        text = response.content.decode()
        assert response.status_code == status, text
        assert "4-8-15" not in text and node.body_hash not in text


def test_a_rejected_node_is_absent_from_the_agent_api(make_note, client):
    from tests._helpers.agents import make_agent

    node = make_note(SECRET)
    agent = make_agent(client)
    assert agent.get(f"nodes/{node.pk}/authority").status_code == 200
    reject(node.pk, owner=OWNER, reason="false")
    for path in (f"nodes/{node.pk}", f"nodes/{node.pk}/authority"):
        response = agent.get(path)
        assert response.status_code == 404, path
        assert "4-8-15" not in response.content.decode()
    recalled = agent.get("recall", {"q": "quokka vault", "scope": "both"})
    assert recalled.status_code == 200 and node.pk not in [
        p["id"] for p in recalled.json()["results"]
    ]


def test_recall_never_returns_adopting_words(make_note):
    from memory.recall import recall

    node = make_note("The quokka feeding time is noon.")
    root_as_owner(node, "Zanzibar-oath: I adopt the quokka feeding time.")
    results = recall("quokka feeding time", scope="both")
    assert node.pk in [p["id"] for p in results]
    assert "Zanzibar" not in json.dumps(results, ensure_ascii=False)
    assert not {"adopting_words", "detail", "body"} & set().union(*map(set, results))


def test_every_trust_state_reads_the_same_in_recall_packets(make_note):
    from memory.recall import recall

    nodes = {state: make_note(f"Quokka fact number {state}.") for state in ("u", "p", "g", "s")}
    propose(nodes["p"].pk, actor="agent:a")
    root_as_owner(nodes["g"])
    root_as_owner(nodes["s"])
    supersede_as_owner(nodes["s"], "Quokka fact number s, revised.")
    packets = {p["id"]: p["trust"] for p in recall("quokka fact", include_superseded=True)}
    expected = {"u": "unreviewed", "p": "proposed", "g": "ground", "s": "superseded"}
    for state, node in nodes.items():
        assert packets[node.pk] == expected[state] == trust_of(node.pk)


def test_every_trust_state_reads_the_same_in_walk_previews_and_authority_reports(
    make_note, root_note
):
    from memory.authority import authority_report
    from memory.walk import around, open_walk

    nodes = {state: make_note(f"Wombat fact number {state}.") for state in ("u", "p", "g", "s")}
    propose(nodes["p"].pk, actor="agent:a")
    root_as_owner(nodes["g"])
    root_as_owner(nodes["s"])
    supersede_as_owner(nodes["s"], "Wombat fact number s, revised.")
    expected = {"u": "unreviewed", "p": "proposed", "g": "ground", "s": "superseded"}
    # Every note derives from the root note, so a walk from it sees them all as neighbours.
    ticket = open_walk(root_note.pk, holder="agent:a", scope="both")
    previews = {
        r["target"]: r["preview"]["trust"] for r in around(ticket, holder="agent:a")["routes"]
    }
    # Superseded neighbours stay walkable (a correction's history), labelled as such.
    for state, node in nodes.items():
        assert previews[node.pk] == expected[state]
        assert authority_report(node.pk)["trust"] == expected[state] == trust_of(node.pk)
