"""Hostile input on the owner's dashboard: a 400 page naming the problem, never a 500, and a
refused act commits nothing (issue 12)."""

from __future__ import annotations

import pytest

from memory.models import Event, Node

OUT_OF_RANGE = ["0001-01-01T00:00", "9999-12-31T23:59", "0001-01-01T00:00:00+01:00"]


@pytest.mark.parametrize(
    "query",
    [
        "node=²",
        "node=99999999999999999999",
        "until=9999-12-31",
        "since=0001-01-01",
        "kind=%ED%A0%80",
        "node=-1",
    ],
)
def test_a_bad_audit_filter_is_a_400_page(owner_client, query):
    response = owner_client.get(f"/audit/?{query}")
    assert response.status_code == 400
    assert b"<html" in response.content.lower()


@pytest.mark.parametrize("query", ["node=²", "until=9999-12-31"])
def test_a_bad_audit_filter_is_a_400_on_export(owner_client, query):
    assert owner_client.get(f"/audit/export.csv?{query}").status_code == 400


@pytest.mark.parametrize("when", OUT_OF_RANGE)
def test_an_out_of_range_as_of_is_a_400_on_search(owner_client, root_note, when):
    response = owner_client.get("/search/", {"q": "seed", "as_of": when})
    assert response.status_code == 400
    assert b"out of range" in response.content


@pytest.mark.parametrize("when", OUT_OF_RANGE)
def test_an_out_of_range_as_of_is_a_400_on_the_node_page(owner_client, root_note, when):
    response = owner_client.get(f"/node/{root_note.pk}/", {"as_of": when})
    assert response.status_code == 400
    assert b"out of range" in response.content


def test_an_htmx_restore_with_a_bad_event_is_refused_before_acting(owner_client, make_note):
    node = make_note("Decays soon.")
    Node.objects.filter(pk=node.pk).update(decayed_at=node.created_at)
    before = Event.objects.count()
    response = owner_client.post(
        f"/node/{node.pk}/restore/", {"event": "abc"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 400
    assert Event.objects.count() == before
    assert Node.objects.get(pk=node.pk).decayed_at is not None


@pytest.mark.parametrize("start", ["=", "+", "-", "@"])
def test_the_csv_export_neutralises_formula_cells(owner_client, make_note, start):
    import csv
    import io

    from review.ceremony import propose

    note = make_note("A note to propose.")
    propose(note.pk, actor="agent:scout", reason=f'{start}HYPERLINK("http://x")')
    response = owner_client.get("/audit/export.csv", {"kind": "proposed"})
    [row] = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert row["reason"] == f'\'{start}HYPERLINK("http://x")'
    assert row["node_id"] == str(note.pk)  # numbers are left alone


def test_a_leading_tab_or_carriage_return_is_neutralised_too():
    from dashboard.auditlog import _cell

    assert (_cell("\t=1+1"), _cell("\r=1"), _cell("plain"), _cell(-3)) == (
        "'\t=1+1",
        "'\r=1",
        "plain",
        -3,
    )


def test_testserver_is_a_host_only_under_test():
    """The settings outside a test run: only loopback names serve."""
    import os
    import subprocess
    import sys

    from django.conf import settings

    script = "import django; django.setup(); from django.conf import settings as s; "
    done = subprocess.run(
        [sys.executable, "-c", script + "print(s.ALLOWED_HOSTS)"],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "grove.settings"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert "testserver" not in done.stdout and "127.0.0.1" in done.stdout
