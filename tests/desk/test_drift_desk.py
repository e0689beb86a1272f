"""Drift where the owner looks: sleep finds it, the node page, the queue and the overview say
it, and the owner answers it by superseding or by keeping the words (an act on the record)."""

from __future__ import annotations

import pytest

from memory.custody.drift import accept_drift, last_found
from memory.errors import Conflict
from memory.models import Event, EventKind
from memory.sleep.run import run_sleep
from tests._helpers.nodes import rooted_vault_section


@pytest.fixture
def rooted_section(db, tmp_path):
    return rooted_vault_section(tmp_path)


def _edit(path):
    path.write_text(path.read_text().replace("March", "April"))


def test_an_edited_section_shows_as_drift_on_its_page_and_the_overview_after_sleep(
    rooted_section, owner_client
):
    node, path = rooted_section
    _edit(path)
    page = owner_client.get(f"/node/{node.pk}/").content.decode()
    assert 'id="drift-banner"' not in page  # a page reads no file: only sleep looks
    run = run_sleep(requested_by="test")
    assert run.steps["drift"]["count"] == 1
    page = owner_client.get(f"/node/{node.pk}/").content.decode()
    assert 'id="drift-banner"' in page and "its section changed on" in page
    assert "1 ground node drifts from its file" in owner_client.get("/").content.decode()
    assert 'id="drift-line"' in owner_client.get("/review/").content.decode()
    assert f'id="drift-{node.pk}"' in owner_client.get("/review/drift/").content.decode()


def test_an_unchanged_file_gives_no_drift_line(rooted_section, owner_client):
    node, _path = rooted_section
    run_sleep(requested_by="test")
    assert last_found() == {}
    assert 'id="drift-line"' not in owner_client.get("/").content.decode()
    assert 'id="drift-banner"' not in owner_client.get(f"/node/{node.pk}/").content.decode()


def test_keeping_the_words_is_on_the_record_and_quiet_until_the_file_moves_on(
    rooted_section, owner_client
):
    node, path = rooted_section
    _edit(path)
    run_sleep(requested_by="test")
    answer = owner_client.post(f"/review/drift/{node.pk}/keep/", {"next": "/review/drift/"})
    assert answer.status_code == 302
    [event] = Event.objects.filter(kind=EventKind.DRIFT_ACCEPTED, node_id=node.pk)
    assert event.actor == "owner" and "April" not in str(event.detail)  # a hash, never words
    assert last_found() == {}
    run_sleep(requested_by="test")
    assert run_sleep(requested_by="test").steps["drift"]["count"] == 0
    path.write_text(path.read_text().replace("April", "May"))
    assert run_sleep(requested_by="test").steps["drift"]["count"] == 1


def test_keeping_words_that_do_not_drift_is_refused(rooted_section):
    node, _path = rooted_section
    with pytest.raises(Conflict, match="does not drift"):
        accept_drift(node.pk, actor="owner")
    assert not Event.objects.filter(kind=EventKind.DRIFT_ACCEPTED).exists()


def test_keep_answers_only_post(rooted_section, owner_client):
    node, path = rooted_section
    _edit(path)
    assert owner_client.get(f"/review/drift/{node.pk}/keep/").status_code == 405
    assert not Event.objects.filter(kind=EventKind.DRIFT_ACCEPTED).exists()


def test_a_superseded_node_no_longer_drifts_on_the_desk(rooted_section, owner_client):
    from review.ceremony import preview_supersede, supersede

    node, path = rooted_section
    _edit(path)
    run_sleep(requested_by="test")
    assert list(last_found()) == [node.pk]
    supersede(
        node.pk,
        new_body="Serviced in April.",
        adopting_words="The file is right.",
        expected_body_hash=preview_supersede("Serviced in April.")["body_hash"],
        owner="owner",
    )
    assert last_found() == {}


def test_what_drifts_is_what_the_latest_real_run_of_the_drift_step_found(rooted_section):
    node, path = rooted_section
    _edit(path)
    run_sleep(requested_by="test")
    assert list(last_found()) == [node.pk]
    path.write_text(path.read_text().replace("April", "March"))  # mended, but no run has seen it
    assert run_sleep(dry_run=True, requested_by="test").steps["drift"]["count"] == 0
    assert "drift" not in run_sleep(only_step="promote", requested_by="test").steps
    assert list(last_found()) == [node.pk]


def test_when_a_file_changed_is_read_back_as_an_instant_and_a_missing_one_has_none(
    rooted_section,
):
    from datetime import datetime

    node, path = rooted_section
    _edit(path)
    run_sleep(requested_by="test")
    assert isinstance(last_found()[node.pk]["changed_at"], datetime)
    path.unlink()
    run_sleep(requested_by="test")
    assert last_found()[node.pk]["changed_at"] is None
