"""The owner sees the agents: the agents page, the audit log by actor prefix and day with its
exports, the tokens page's governing form and snippets, the overview's "since you last looked"
and the Atom feed of what waits."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from dashboard.views import feed_key
from memory.models import ApiToken, Event, EventKind, Node
from memory.tokens import change_token
from review.ceremony import propose
from tests._helpers.agents import make_agent

pytestmark = pytest.mark.django_db


@pytest.fixture
def busy(client, make_note):
    """An agent that recalled, read and proposed, and a node it wrote."""
    node = make_note("The boiler is serviced in March.")
    agent = make_agent(client, name="claude-desk")
    agent.get("recall", {"q": "boiler service"})
    agent.get(f"nodes/{node.pk}")
    agent.post(f"nodes/{node.pk}/propose")
    return agent, node


def test_the_agents_page_counts_each_kind_by_day_with_the_queries(owner_client, busy):
    page = owner_client.get("/agents/")
    [agent] = page.context["agents"]
    today = agent.days[0]
    assert today.counts == {"wrote": 0, "proposed": 1, "recalled": 1, "read": 1}
    assert agent.pending == 1 and agent.declined == 0
    assert "boiler service" in page.content.decode()


def test_the_actor_filter_matches_a_prefix_without_agent(owner_client, busy):
    page = owner_client.get("/audit/", {"actor": "claude-desk"})
    kinds = {e.kind for e in page.context["page"].object_list}
    assert kinds == {"recalled", "read", "proposed"}
    assert "agent:claude-desk" in page.context["actors"]


def test_yesterday_finds_only_yesterdays_events(owner_client, busy):
    _agent, _node = busy
    with time_machine.travel(timezone.now() + timedelta(days=1)):
        page = owner_client.get("/audit/")
        label, since, until = page.context["presets"][1]
        assert label == "yesterday"
        shown = owner_client.get("/audit/", {"actor": "claude", "since": since, "until": until})
        assert shown.context["page"].paginator.count == 3


def test_the_exports_carry_the_token_and_the_query(owner_client, busy):
    rows = list(
        csv.DictReader(
            io.StringIO(
                b"".join(
                    owner_client.get(
                        "/audit/export.csv", {"actor": "claude-desk"}
                    ).streaming_content
                ).decode()
            )
        )
    )
    recalled = next(r for r in rows if r["kind"] == "recalled")
    assert recalled["token"] == "claude-desk" and recalled["query"] == "boiler service"
    data = json.loads(
        b"".join(owner_client.get("/audit/export.json", {"kind": "read"}).streaming_content)
    )
    assert data["events"][0]["token"] == "claude-desk"


def test_the_tokens_form_changes_a_grant_on_the_record(owner_client, db):
    make_agent(owner_client, name="scout")
    response = owner_client.post(
        "/tokens/scout/change/",
        {"domains": "personal, work", "muted": "1", "write_limit": "30"},
    )
    assert response.status_code == 302
    token = ApiToken.objects.get(name="scout")
    assert token.muted and token.write_limit == 30 and token.domains == ["personal", "work"]
    grant = Event.objects.filter(kind=EventKind.TOKEN_GRANTED).latest("id")
    assert grant.reason == "changed" and grant.detail["changed"] == [
        "domains",
        "muted",
        "write_limit",
    ]


def test_the_tokens_page_offers_each_hosts_snippet(owner_client, db):
    make_agent(owner_client, name="scout")
    page = owner_client.get("/tokens/").content.decode()
    assert "claude mcp add grove" in page and "[mcp_servers.grove]" in page
    assert "&quot;mcpServers&quot;" in page and "--token scout" in page
    assert "$GROVE_TOKEN" in page  # a listed token's curl holds no secret


def test_since_you_last_looked_counts_what_arrived_and_changes_no_node(owner_client, busy):
    _agent, node = busy
    before = Node.objects.values_list("access_count", "last_accessed_at").get(pk=node.pk)
    page = owner_client.get("/")
    since = page.context["since"]
    assert since["new_proposals"] == 1 and since["waiting"] == 1
    assert {t.name: c for t, c in since["activity"]}["claude-desk"]["recalled"] == 1
    assert Node.objects.values_list("access_count", "last_accessed_at").get(pk=node.pk) == before
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        again = owner_client.get("/").context["since"]
    assert again["new_proposals"] == 0 and again["waiting"] == 1


def test_the_atom_feed_lists_what_waits(client, make_note):
    node = make_note("Waiting for the owner.")
    propose(node.pk, actor="agent:scout")
    response = client.get(f"/feed/{feed_key()}/waiting.atom")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    text = response.content.decode()
    assert "1 proposal waiting" in text and f"Proposal #{node.pk} from agent:scout" in text
    assert "Waiting for the owner." not in text  # a feed leaves the machine: no words


def test_the_atom_feed_refuses_a_wrong_secret(client, db):
    wrong = "0" * 32
    assert client.get(f"/feed/{wrong}/waiting.atom").status_code == 404
    assert client.get(f"/feed/{feed_key()[:-1]}/waiting.atom").status_code == 404


def test_a_muted_agents_proposals_show_in_a_line_of_their_own(owner_client, make_note):
    agent = make_agent(owner_client, name="noisy")
    node = make_note("Noise.")
    propose(node.pk, actor="agent:noisy", token=agent.token)
    change_token(name="noisy", muted=True)
    page = owner_client.get("/review/")
    assert page.context["matching"] == 0
    assert "agent:noisy · 1" in page.content.decode()


def test_the_waiting_fragment_says_what_goes_within_seven_days(owner_client, make_note):
    make_note("Nobody reads the old bus timetable.", days_old=10)  # the decay age is 14 days
    body = owner_client.get("/overview/waiting/").content.decode()
    assert "No pending decays." in body and "1 goes within 7 days" in body
