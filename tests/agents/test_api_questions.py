"""Questions through the agents' door: the JSON API (HTTP) and MCP (a real stdio session)."""

from __future__ import annotations

import pytest

from memory.models import Edge, Node
from memory.questions import is_open
from memory.tokens import create_token
from memory.write import write_node
from tests._helpers.agents import error_of, make_agent
from tests._helpers.mcp import mcp_session, tool_data


@pytest.fixture
def agent(client, db):
    return make_agent(client)


def test_an_agent_asks_feeds_answers_and_reopens(agent, make_note):
    topic, clue = make_note("The boiler knocks."), make_note("After the pressure drop.")
    fix, again = make_note("Pressure topped up."), make_note("It knocks in the cold.")
    asked = agent.post("questions", {"body": "Why does it knock?", "about": [topic.pk]})
    assert asked.status_code == 201 and asked.json()["open"] is True
    question = asked.json()["question"]
    assert Node.objects.get(pk=question).signature == "agent:scout"
    assert agent.post(f"questions/{question}/feed", {"node": clue.pk}).json()["open"]
    assert not agent.post(f"questions/{question}/answer", {"node": fix.pk}).json()["open"]
    assert agent.post(f"questions/{question}/reopen", {"node": again.pk}).json()["open"]
    near = agent.get(f"nodes/{topic.pk}/questions").json()
    assert [q["id"] for q in near["questions"]] == [question]


def test_questions_keep_to_the_tokens_domains(agent, make_note, counts):
    mine = make_note("The boiler knocks.")
    theirs = make_note("Blood pressure 120/80.", domain="health")
    before = counts()
    response = agent.post("questions", {"body": "Why?", "about": [theirs.pk]})
    assert (response.status_code, error_of(response)) == (404, "not_found")
    assert counts() == before
    question = agent.post("questions", {"body": "Why?", "about": [mine.pk]}).json()["question"]
    hidden = agent.post(f"questions/{question}/feed", {"node": theirs.pk})
    assert hidden.status_code == 404
    assert not Edge.objects.filter(from_node=theirs, kind="feeds").exists()
    assert agent.get(f"nodes/{theirs.pk}/questions").status_code == 404


def test_question_refusals_are_clear(agent, client, make_note, counts):
    topic = make_note("The boiler knocks.")
    reader = make_agent(client, name="reader", read_only=True)  # its grant is an event
    before = counts()
    bad_body = {"body": 3, "about": [topic.pk]}  # a real id: ids need not start at 1
    for data in ({"body": "Why?"}, {"body": "Why?", "about": []}, bad_body):
        assert agent.post("questions", data).status_code == 400, data
    response = reader.post("questions", {"body": "Why?", "about": [topic.pk]})
    assert (response.status_code, error_of(response)) == (403, "read_only")
    not_q = agent.post(f"questions/{topic.pk}/feed", {"node": topic.pk})
    assert error_of(not_q) == "not_question"
    assert counts() == before


def test_questions_over_mcp(real_db):
    create_token(name="desk", domains=["personal"])
    seed = write_node(
        body="Notebook import.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="notebook.md",
    ).node
    answer = write_node(
        body="Low pressure.",
        kind="note",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": seed.pk}],
    ).node

    async def script(session):
        names = {tool.name for tool in (await session.list_tools()).tools}
        asked = tool_data(
            await session.call_tool("ask_question", {"body": "Why?", "about": [seed.pk]})
        )
        linked = tool_data(
            await session.call_tool(
                "question_link",
                {"question_id": asked["question"], "act": "answer", "node_id": answer.pk},
            )
        )
        near = tool_data(await session.call_tool("open_questions", {"node_id": seed.pk}))
        return names, asked, linked, near

    names, asked, linked, near = mcp_session(real_db, "desk", script)
    assert {"ask_question", "question_link", "open_questions"} <= names
    assert asked["open"] is True and linked["open"] is False
    assert near["questions"] == [] and not is_open(asked["question"])
