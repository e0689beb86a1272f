"""A small demo memory, loaded by `make run` when the database is empty.

Everything goes through the write path and the ceremonies (so it lives here, beside the pages,
not in the engine); the store clock is backdated so that some entries are
old enough for the decay sweep to consider them (unread, nothing live reaching them).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from memory.models import Node
from memory.scroll import commit_turn
from memory.write import write_node
from review import ceremony

GARDEN = """# Garden
The tomatoes go in the south bed after the last frost, usually mid-May.
Neem oil keeps the aphids off the roses; spray in the evening.
The rain barrel overflows in heavy storms; the downpipe diverter needs a filter."""

TURNS = [
    ("Ana", "The plumber can come Thursday at nine to look at the boiler."),
    ("owner", "Thursday works. Ask him to check the pressure valve too."),
    ("Ana", "He says the valve is fine but the expansion vessel needs recharging."),
    ("owner", "Then book the recharge for next month, before the cold sets in."),
]


CLIPPINGS = [
    (120, "https://example.org/sourdough", "Sourdough starter: feed 1:1:1 every 12 hours."),
    (100, "https://example.org/bikes", "Chain wax lasts about 300 km between coats."),
    (86, "https://example.org/birds", "Robins sing at night near street lights."),
]
ASSISTANT = [
    (
        "What do I need before winter?",
        "Recharge the boiler's expansion vessel and clear the downpipe filter.",
    ),
    ("Remind me which bed the tomatoes go in.", "The south bed, after the last frost."),
]


def load_demo(*, now: datetime | None = None) -> int:
    """Write the demo memory unless the database already holds nodes. Returns nodes written."""
    if Node.objects.exists():
        return 0
    now = now or timezone.now()
    with transaction.atomic():
        garden, written = _garden(now)
        written += _boiler_chat(now)
        written += _loose_ends(now, garden)
    # A conversation with the owner's assistant: pairs on the scroll.
    for user, assistant in ASSISTANT:
        commit_turn(conversation="demo-assistant", user=user, assistant=assistant)
        written += 1
    return written


def _garden(now: datetime) -> tuple[Node, int]:
    """An imported garden note, one home note per line, the tomato line rooted by the owner."""
    garden = write_node(
        body=GARDEN,
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="notes/garden.md",
        created_at=now - timedelta(days=90),
    ).node
    lines = [
        write_node(
            body=line,
            kind="note",
            jurisdiction="home",
            signature="owner",
            origins=[{"id": garden.pk, "relation": "derived_from"}],
            created_at=now - timedelta(days=89),
        ).node
        for line in GARDEN.splitlines()[1:]
    ]
    tomatoes = lines[0]
    ceremony.root(
        tomatoes.pk,
        adopting_words="Yes, this is how we plant.",
        expected_body_hash=tomatoes.body_hash,
        owner="owner",
    )
    return garden, 1 + len(lines)


def _boiler_chat(now: datetime) -> int:
    """An imported chat, its utterances in reply order, and an agent's inference it proposes."""
    chat = write_node(
        body="Chat with Ana about the boiler, October.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="chats/ana-boiler.json",
        created_at=now - timedelta(days=45),
        referent_time=(now - timedelta(days=50)).isoformat(),
    ).node
    said: list[Node] = []
    for i, (speaker, text) in enumerate(TURNS):
        origins = [{"id": chat.pk, "relation": "derived_from"}]
        if said:
            origins.append({"id": said[-1].pk, "relation": "responds_to"})
        said.append(
            write_node(
                body=text,
                kind="utterance",
                jurisdiction="wild",
                signature=speaker,
                source=f"chats/ana-boiler.json#{i + 1}",
                origins=origins,
                created_at=now - timedelta(days=45),
                referent_time=(now - timedelta(days=50, minutes=-i)).isoformat(),
            ).node
        )
    inference = write_node(
        body="The boiler's expansion vessel needs recharging before winter.",
        kind="inference",
        jurisdiction="home",
        signature="agent:assistant",
        origins=[{"id": said[-1].pk, "relation": "derived_from"}],
        created_at=now - timedelta(days=44),
    ).node
    ceremony.propose(
        inference.pk, actor="agent:assistant", reason="Useful before the heating season."
    )
    return 1 + len(said) + 1


def _loose_ends(now: datetime, garden: Node) -> int:
    """Old clippings nobody read and nothing links to (what the decay sweep will collect), and a
    fresh journal entry citing the garden note."""
    for days, url, text in CLIPPINGS:
        write_node(
            body=text,
            kind="internet",
            jurisdiction="wild",
            signature="agent:browser",
            source=url,
            created_at=now - timedelta(days=days),
        )
    write_node(
        body="Call the council about the hedge on the north side.",
        kind="journal",
        jurisdiction="home",
        signature="owner",
        origins=[{"id": garden.pk, "relation": "cites"}],
        created_at=now - timedelta(days=3),
    )
    return len(CLIPPINGS) + 1
