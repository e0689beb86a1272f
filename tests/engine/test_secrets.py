"""Credentials never stored: every door (API, MCP, importer, dashboard form, turns) replaces
them by a label through the one write path, names their kinds on the arrival, and neither the
word index, a recall excerpt, the scroll nor the export holds the secret."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from memory.models import Event, EventKind, Node
from tests._helpers.agents import make_agent, write_note
from tests._helpers.credentials import CREDENTIALS, ORDINARY, with_secret
from tests._helpers.mcp import mcp_session, tool_data

SHAPES = pytest.mark.parametrize(("kind", "template", "secret"), CREDENTIALS)


def _arrival(node: Node) -> dict:
    return Event.objects.get(node=node, kind=EventKind.ARRIVED).detail


def _stored_once(node: Node, kind: str, template: str, secret: str) -> None:
    assert node.body.endswith(with_secret(template, f"[redacted: {kind}]"))
    assert secret not in node.body
    assert _arrival(node)["redacted"] == {kind: 1}
    assert secret not in json.dumps(_arrival(node))


@SHAPES
def test_the_api_stores_the_label_and_the_arrival_names_the_kind(
    client, root_note, kind, template, secret
):
    agent = make_agent(client)
    response = write_note(agent, root_note, body=with_secret(template, secret))
    assert response.status_code == 201, response.json()
    _stored_once(Node.objects.get(pk=response.json()["id"]), kind, template, secret)


@SHAPES
def test_a_question_planted_on_the_dashboard_is_redacted(
    owner_client, root_note, kind, template, secret
):
    body = "Why? " + with_secret(template, secret)
    owner_client.post("/review/questions/plant/", {"body": body, "about": str(root_note.pk)})
    _stored_once(Node.objects.get(kind="question"), kind, template, secret)


def test_an_imported_transcript_is_redacted_message_by_message(db, tmp_path):
    said = [with_secret(template, secret) for _, template, secret in CREDENTIALS]
    messages = [{"role": "user", "content": text, "time": "2024-05-08T09:00:00Z"} for text in said]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    call_command("ingest", str(path), "--format", "transcript", stdout=StringIO())
    utterances = Node.objects.filter(kind="utterance").order_by("id")
    assert len(utterances) == len(CREDENTIALS)
    for node, (kind, template, secret) in zip(utterances, CREDENTIALS, strict=True):
        _stored_once(node, kind, template, secret)


def test_mcp_remember_is_redacted(real_db):
    from memory.tokens import create_token
    from memory.write import write_node

    create_token(name="desk", domains=["personal"])
    seed = write_node(body="seed", kind="import", jurisdiction="wild", signature="s", source="x")

    async def script(session):
        ids = []
        for _, template, secret in CREDENTIALS:
            arguments = {"body": with_secret(template, secret), "origins": [{"id": seed.node.pk}]}
            ids.append(tool_data(await session.call_tool("remember", arguments))["id"])
        return ids

    ids = mcp_session(real_db, "desk", script)
    for pk, (kind, template, secret) in zip(ids, CREDENTIALS, strict=True):
        _stored_once(Node.objects.get(pk=pk), kind, template, secret)


def test_a_turn_keeps_no_secret_in_its_scroll_or_its_pair(db, client, settings, tmp_path):
    settings.GROVE_SCROLL_DIR = str(tmp_path / "scroll")
    agent = make_agent(client)
    user = "my key is AKIAIOSFODNN7EXAMPLE"
    response = agent.post("turns", {"conversation": "c1", "user": user, "assistant": "noted"})
    assert response.status_code == 201, response.json()
    pair = Node.objects.get(kind="pair")
    assert pair.body == "user: my key is [redacted: aws-access-key]\nassistant: noted"
    assert _arrival(pair)["redacted"] == {"aws-access-key": 1}
    scroll = (tmp_path / "scroll" / "c1.jsonl").read_text()
    assert "AKIAIOSFODNN7EXAMPLE" not in scroll and "[redacted: aws-access-key]" in scroll


def test_a_url_password_in_the_source_is_redacted(make_note):
    node = make_note("Read the dump.", kind="import", source="https://me:hunter2secret@x.org/d")
    assert node.source == "https://me:[redacted: url-password]@x.org/d"
    assert _arrival(node)["redacted"] == {"url-password": 1}


def test_the_word_index_recall_and_the_export_never_hold_the_secret(client, root_note, tmp_path):
    agent = make_agent(client)
    for _, template, secret in CREDENTIALS:
        write_note(agent, root_note, body="deploy notes " + with_secret(template, secret))
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT body FROM memory_node_fts")
        else:
            cursor.execute("SELECT body_tsv::text FROM memory_node")
        indexed = " ".join(str(row[0]) for row in cursor.fetchall())
    excerpts = json.dumps(agent.get("recall", {"q": "deploy notes redacted", "limit": 50}).json())
    call_command("export", str(tmp_path / "m.jsonl"), stdout=StringIO())
    exported = (tmp_path / "m.jsonl").read_text()
    assert "[redacted: aws-access-key]" in excerpts
    for _, _, secret in CREDENTIALS:
        for where in (indexed, excerpts, exported):
            assert secret not in where and secret.lower() not in where


@pytest.mark.parametrize("words", ORDINARY)
def test_ordinary_technical_words_arrive_as_written(make_note, words):
    node = make_note(words)
    assert node.body == words
    assert "redacted" not in _arrival(node)


def test_a_mentioned_tag_keeps_its_words_and_a_stripped_block_is_recorded(make_note):
    kept = make_note("Use the `<think>` tag in prompts")
    assert kept.body == "Use the `<think>` tag in prompts"
    stripped = make_note("<think>plan it</think>Ship on Friday.")
    assert stripped.body == "Ship on Friday."
    assert _arrival(stripped)["stripped"] == {"think": 1}


def test_a_secret_in_metadata_is_redacted_and_counted(make_note):
    key = "AKIAIOSFODNN7EXAMPLE"
    node = make_note("Deployed the build.", metadata={"env": {"AWS_KEY": key}, "tags": [key]})
    assert key not in json.dumps(node.metadata)
    assert node.metadata["env"]["AWS_KEY"] == "[redacted: aws-access-key]"
    assert _arrival(node)["redacted"] == {"aws-access-key": 2}


def test_a_secret_in_a_recall_query_is_not_logged_nor_on_the_record(client, root_note):
    from memory.models import RecallLog

    agent = make_agent(client)
    key = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    answer = agent.get("recall", {"q": f"which repo uses {key}"})
    assert answer.status_code == 200
    [log] = RecallLog.objects.all()
    assert key not in log.query and "[redacted: github-token]" in log.query
    recalled = Event.objects.filter(kind=EventKind.RECALLED)
    assert recalled.exists() and all(key not in json.dumps(e.detail) for e in recalled)
