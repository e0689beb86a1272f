"""The visibility rules over MCP (issue 16): one real stdio session checks every rule on recall,
read and walk, before and after the owner's acts (slow, hence one test, and a file of its own that
the mutant runs leave out like tests/agents/test_mcp.py)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memory.forgetting import let_go
from memory.models import ApiToken, Node
from memory.tokens import create_token
from memory.write import write_node
from review.ceremony import reject, seal
from tests._helpers.acts import root_as_owner, supersede_as_owner
from tests._helpers.mcp import mcp_session, tool_data
from tests._helpers.rules import RULES
from tests._helpers.vendor import drop_trigger


def test_the_rules_hold_over_mcp(real_db) -> None:
    create_token(name="desk", domains=["personal", "work"])
    seed = write_node(
        body="Import.", kind="import", jurisdiction="wild", signature="importer", source="a.md"
    )
    hour_ago = timezone.now() - timedelta(hours=1)
    subjects = {
        rule: write_node(
            body=f"Quillwort {rule} note.",
            kind="note",
            jurisdiction="home",
            signature="owner",
            origins=[{"id": seed.node.pk}],
            domain="work" if rule == "domain" else "personal",
            created_at=None if rule == "as_of" else hour_ago,
        ).node
        for rule in RULES
    }
    before_as_of = (subjects["as_of"].created_at - timedelta(minutes=30)).isoformat()

    async def script(session):
        async def recall_tool(**extra) -> dict[int, str]:
            args = {"query": "quillwort note", "scope": "both", "limit": 20, **extra}
            found = tool_data(await session.call_tool("recall", args))["results"]
            return {p["id"]: p["trust"] for p in found}

        async def by_id(tool: str, node_id: int) -> str | None:
            args = (
                {"action": "open", "node_id": node_id} if tool == "walk" else {"node_id": node_id}
            )
            result = await session.call_tool(tool, args)
            if result.is_error:
                assert "not_found" in result.content[0].text
                return None
            return tool_data(result).get("trust", "opened")

        ids = [n.pk for n in subjects.values()]
        seen = [await recall_tool(), {i: await by_id("read", i) for i in ids}]
        seen.append({i: await by_id("walk", i) for i in ids})
        # No act narrows a token (its grant is guarded, migration 0025): narrowed behind the
        # guard, to see every door read the token's domains afresh on each call.
        drop_trigger("memory_apitoken_grant_immutable")
        drop_trigger("memory_apitoken_governed_after_grant")
        ApiToken.objects.filter(name="desk").update(domains=["personal"])
        hide_in_store(subjects)
        hidden = [await recall_tool(as_of=before_as_of), await recall_tool()]
        hidden += [
            {i: await by_id("read", i) for i in ids},
            {i: await by_id("walk", i) for i in ids},
        ]
        return seen, hidden

    seen, hidden = mcp_session(real_db, "desk", script)
    for found in seen:
        assert set(found) >= {n.pk for n in subjects.values()}
        assert None not in found.values()
    for rule, node in subjects.items():
        # As of half an hour ago: decay and supersession came later, a seal or a rejection
        # hides the words from every past view too (DESIGN.md, as_of).
        assert (node.pk in hidden[0]) == (rule in ("decayed", "superseded")), rule
        if rule != "as_of":
            assert node.pk not in hidden[1], rule
            expected = "superseded" if rule == "superseded" else None
            assert hidden[2][node.pk] == expected, rule
            assert (hidden[3][node.pk] is None) == (rule != "superseded"), rule


def hide_in_store(subjects: dict[str, Node]) -> None:
    """The state rules, applied by the owner's own acts while the agent's session is open."""
    let_go(subjects["decayed"].pk, actor="owner")
    seal(subjects["sealed"].pk, owner="owner", reason="private")
    reject(subjects["rejected"].pk, owner="owner", reason="wrong")
    root_as_owner(subjects["superseded"])
    supersede_as_owner(subjects["superseded"], "A different plant altogether.")
