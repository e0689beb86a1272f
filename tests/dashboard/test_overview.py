from __future__ import annotations

import pytest

from dashboard.demo import load_demo
from dashboard.owner import login_path


def test_it_redirects_to_login_when_signed_out(client, db):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_the_admin_requires_the_owner(client, db):
    response = client.get("/admin/memory/node/")
    assert response.status_code == 302


def test_it_shows_counts_and_latest_events(owner_client, make_note):
    make_note("Visible on the overview.")
    response = owner_client.get("/")
    assert response.status_code == 200
    assert response.context["counts"]["live"] == 2


def test_the_login_link_signs_in_once(client, db):
    path = login_path()
    assert client.get(path).status_code == 200  # a GET never spends it
    assert client.post(path).status_code == 302
    assert client.get("/").status_code == 200
    client.logout()
    assert client.post(path).status_code == 400  # spent: last_login changed


def test_a_forged_login_link_is_refused(client, db):
    path = login_path()
    assert client.post(path[:-3] + "abc/").status_code == 400


def test_the_login_link_post_needs_csrf(db):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    assert client.post(login_path()).status_code == 403


def test_the_admin_is_read_only(owner_client, make_note):
    node = make_note("Admin sees me.")
    assert owner_client.get(f"/admin/memory/node/{node.pk}/change/").status_code == 200
    assert owner_client.get("/admin/memory/node/add/").status_code == 403
    assert owner_client.post(f"/admin/memory/node/{node.pk}/delete/").status_code == 403


def test_the_demo_loads_once(db):
    assert load_demo() > 10
    assert load_demo() == 0


@pytest.mark.browser
def test_it_logs_in_through_the_link_and_shows_the_overview(owner_page, make_note, screenshot):
    make_note("<script>alert(1)</script> stays text")
    from django.db import transaction

    from memory import audit
    from memory.models import Node

    with transaction.atomic():
        audit.record("kept", node=Node.objects.last(), actor="owner")
    dialogs = []
    owner_page.on("dialog", lambda d: dialogs.append(d.message))
    owner_page.reload()
    assert owner_page.locator("h1").inner_text() == "Overview"
    assert owner_page.locator("#count-live .n").inner_text() == "2"
    assert "<script>alert(1)</script> stays text" in owner_page.locator("table.events").inner_text()
    screenshot(owner_page, "overview")
    assert dialogs == []
