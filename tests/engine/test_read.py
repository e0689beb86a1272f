from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memory.errors import NotFound
from memory.models import Node, PendingCite
from memory.read import read
from memory.visibility import (
    Visibility,
)
from review.ceremony import propose, seal
from tests._helpers.acts import root_as_owner
from tests._helpers.events import mark


def test_it_returns_the_full_body_led_by_jurisdiction(make_note):
    body = "The heron " + "waits " * 100
    note = make_note(body)
    result = read(note.pk)
    assert next(iter(result)) == "jurisdiction"
    assert result["body"] == body.strip() and result["trust"] == "unreviewed"


def test_it_counts_one_access_and_stamps_the_time(make_note):
    note = make_note("The heron.")
    read(note.pk)
    read(note.pk)
    note.refresh_from_db()
    assert note.access_count == 2
    assert timezone.now() - note.last_accessed_at < timedelta(seconds=5)


@pytest.mark.parametrize("kind", ["decayed", "sealed", "rejected"])
def test_a_hidden_node_reads_as_not_found_and_is_not_counted(make_note, kind):
    note = make_note("The heron secret.")
    assert read(note.pk)["id"] == note.pk
    mark(note, kind)
    with pytest.raises(NotFound) as refused:
        read(note.pk)
    assert "heron" not in refused.value.message
    note.refresh_from_db()
    assert note.access_count == 1


def test_a_node_outside_the_callers_domains_does_not_exist(make_note):
    note = make_note("The heron project.", domain="work")
    assert read(note.pk, domains=["work"])["id"] == note.pk
    with pytest.raises(NotFound) as outside:
        read(note.pk, domains=["personal"])
    with pytest.raises(NotFound) as missing:
        read(10**9, domains=["personal"])
    assert outside.value.message.replace(str(note.pk), "N") == missing.value.message.replace(
        str(10**9), "N"
    )


def test_as_of_before_creation_is_not_found(make_note):
    note = make_note("The heron.", days_old=1)
    with pytest.raises(NotFound):
        read(note.pk, as_of=timezone.now() - timedelta(days=2))


def test_reading_a_wild_node_pends_a_cite_for_the_holder(make_note):
    wild = make_note("An article about herons.", kind="hearsay", jurisdiction="wild")
    home = make_note("My heron note.")
    read(wild.pk, actor="agent-7", holder="agent-7")
    read(home.pk, actor="agent-7", holder="agent-7")
    assert list(PendingCite.objects.values_list("holder", "node_id")) == [("agent-7", wild.pk)]


def test_the_owner_browsing_a_wild_node_pends_no_cite(make_note):
    wild = make_note("An article about herons.", kind="hearsay", jurisdiction="wild")
    assert read(wild.pk, actor="owner")["access_count"] == 1
    assert not PendingCite.objects.exists()


def _vis(**kw) -> Visibility:
    return Visibility.of(
        domains=kw.get("domains"), scope=kw.get("scope", "both"), as_of=kw.get("as_of")
    )


def test_visible_node_refuses_each_rule_with_the_one_answer(make_note) -> None:
    from memory.forgetting import let_go
    from memory.read import visible_node
    from review.ceremony import reject
    from tests._helpers.acts import root_as_owner, supersede_as_owner

    def refused(node_id, **kw) -> bool:
        superseded = kw.pop("include_superseded", True)
        try:
            visible_node(node_id, vis=_vis(**kw), include_superseded=superseded)
        except NotFound as missing:
            assert missing.message == f"no node {node_id} here"
            return True
        return False

    node = make_note("Kept in the work domain, at home.", domain="work")
    made = node.created_at
    assert visible_node(node.pk, vis=_vis(domains=["work"], scope="home", as_of=made)) == (
        Node.objects.get(pk=node.pk),
        "unreviewed",
    )
    assert refused(node.pk, domains=["personal"])
    assert refused(node.pk, scope="wild")
    assert not refused(node.pk, scope="home")
    assert refused(node.pk, as_of=made - timedelta(microseconds=1))
    assert refused("not a number") and refused(node.pk + 1000)

    old = make_note("Replaced later by better words.")
    root_as_owner(old)
    supersede_as_owner(old, "Better words, now ground.")
    assert not refused(old.pk)
    assert refused(old.pk, include_superseded=False)

    gone = make_note("Let go by the owner.")
    let_go(gone.pk, actor="owner")
    assert refused(gone.pk) and refused(gone.pk, as_of=datetime.now(UTC) + timedelta(days=1))
    assert not refused(gone.pk, as_of=gone.created_at)  # it was live then

    for hide in (seal, lambda pk, owner: reject(pk, owner=owner, reason="false")):
        hidden = make_note(f"Hidden by the owner ({id(hide)}).")
        hide(hidden.pk, owner="owner")
        assert refused(hidden.pk) and refused(hidden.pk, as_of=hidden.created_at)


def test_read_returns_every_field_by_name(make_note) -> None:
    node = make_note("The boiler manual is in the hall drawer.", source="manual.md")
    Node.objects.filter(pk=node.pk).update(metadata={"room": "hall"})
    body = read(node.pk, actor="agent:desk")
    node.refresh_from_db()
    assert body == {
        "jurisdiction": "home",
        "id": node.pk,
        "trust": "unreviewed",
        "kind": "note",
        "body": node.body,
        "body_hash": node.body_hash,
        "source": "manual.md",
        "domain": "personal",
        "signature": "owner",
        "metadata": {"room": "hall"},
        "created_at": node.created_at.isoformat(),
        "referent_time": None,
        "event_time": node.event_time.isoformat(),
        "access_count": 1,
        "last_accessed_at": node.last_accessed_at.isoformat(),
        "permanent": False,
        "live": True,
    }


def test_a_read_day_is_a_utc_day_whatever_the_local_zone(make_note, settings) -> None:
    from memory.read import access_fields

    settings.TIME_ZONE = "Pacific/Kiritimati"  # UTC+14: its midnight is 10:00 UTC the day before
    node = make_note("Read late one UTC evening, and again the next UTC morning.")
    evening = datetime(2026, 11, 29, 20, tzinfo=UTC)
    Node.objects.filter(pk=node.pk).update(read_days=1, last_accessed_at=evening)
    Node.objects.filter(pk=node.pk).update(**access_fields(evening + timedelta(hours=9), "x"))
    assert Node.objects.get(pk=node.pk).read_days == 2  # a new UTC day, though not a local one


def test_a_read_without_an_actor_is_the_owners(make_note) -> None:
    node = make_note("The heron nests by the weir.")
    read(node.pk)
    node.refresh_from_db()
    assert node.last_read_by == "owner"


def test_a_read_day_starts_at_midnight_utc_exactly(make_note, monkeypatch) -> None:
    node = make_note("The heron nests by the weir.")
    # Midnight exactly, then mid-morning with a fraction of a second: one day.
    for clock in ((0, 0, 0, 0), (10, 20, 30, 500_000)):
        at = datetime(2026, 12, 1, *clock, tzinfo=UTC)
        monkeypatch.setattr("django.utils.timezone.now", lambda at=at: at)
        read(node.pk)
    node.refresh_from_db()
    assert (node.access_count, node.read_days) == (2, 1)


def test_a_reader_is_recorded_to_200_characters(make_note) -> None:
    node = make_note("The heron nests by the weir.")
    read(node.pk, actor="r" * 201)
    node.refresh_from_db()
    assert node.last_read_by == "r" * 200


def test_a_read_as_of_an_instant_reports_the_trust_then(make_note) -> None:
    node = make_note("The garden needs water.")
    proposed = propose(node.pk, actor="agent:scout")
    root_as_owner(node)
    assert read(node.pk)["trust"] == "ground"
    assert read(node.pk, as_of=proposed.at)["trust"] == "proposed"


def test_a_decay_between_the_check_and_the_count_answers_like_a_missing_node(
    make_note, monkeypatch
) -> None:
    import memory.read as read_module
    from memory.forgetting import let_go

    node = make_note("Read while the sleep lets it go.")
    check = read_module.visible_node

    def check_then_decay(node_id, **kwargs):
        seen = check(node_id, **kwargs)
        let_go(node.pk, actor="owner")  # committed after the check, before the count
        return seen

    monkeypatch.setattr(read_module, "visible_node", check_then_decay)
    with pytest.raises(NotFound) as raced:
        read_module.read(node.pk)
    assert raced.value.message == f"no node {node.pk} here"


def test_read_refusals_name_the_id_asked_for(make_note) -> None:
    node = make_note("A work memo.", domain="work")
    with pytest.raises(NotFound) as hidden:
        read(node.pk, domains=["personal"])
    assert hidden.value.message == f"no node {node.pk} here"
    with pytest.raises(NotFound) as garbled:
        read("twelve")  # type: ignore[arg-type]
    assert garbled.value.message == "no node twelve here"
