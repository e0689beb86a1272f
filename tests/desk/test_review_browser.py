from __future__ import annotations

import pytest

from memory.models import Event, EventKind, Trust
from memory.trust import trust_of
from review.ceremony import propose, root

pytestmark = pytest.mark.browser

HOSTILE = (
    '<script>alert(1)</script><img src=x onerror="alert(2)"> \u202eexe.gnp '
    + "y" * 5000
    + "\n<b onmouseover=alert(3)>bold?</b>"
)


def _proposed(make_note, body="The boiler is serviced every March."):
    node = make_note(body)
    propose(node.pk, actor="agent:scout", reason="seen in three notes")
    return node


def _ground(make_note, body="The spare key is with Ana."):
    node = make_note(body)
    root(node.pk, adopting_words="Yes.", expected_body_hash=node.body_hash, owner="owner")
    return node


def _pending(make_note):
    """Two notes the sweep collects now: old, never read, their one neighbour let go."""
    from memory.forgetting import let_go

    old = make_note("An old thought nobody read.", days_old=20)
    older = make_note("Another old thought nobody read.", days_old=25)
    let_go(old.out_edges.get().to_node_id, actor="owner")
    return old, older


def _mark(page):
    """A flag that survives only as long as the document does: proof of no navigation."""
    page.evaluate("window.__stay = 'here'")


def _stayed(page) -> bool:
    return page.evaluate("window.__stay") == "here"


def _fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 2")


def test_it_roots_with_the_matching_hash(owner_page, live_server, make_note, screenshot):
    node = _proposed(make_note)
    owner_page.goto(f"{live_server.url}/review/")
    row = owner_page.locator(f"#node-{node.pk}")
    assert "agent:scout" in row.inner_text() and "seen in three notes" in row.inner_text()
    screenshot(owner_page, "review-queue")
    row.get_by_role("link", name="Review and root").click()
    assert owner_page.locator("#stored-body").inner_text() == node.body
    assert owner_page.locator("#stored-hash").inner_text() == node.body_hash
    owner_page.get_by_label("Your adopting words").fill("Yes, serviced every March.")
    screenshot(owner_page, "review-root")
    owner_page.get_by_role("button", name=f"Root #{node.pk}").click()
    owner_page.wait_for_url(f"{live_server.url}/review/")  # the next item: none waits
    assert f"Rooted #{node.pk}" in owner_page.locator(".messages").inner_text()
    screenshot(owner_page, "review-rooted")
    assert trust_of(node.pk) == Trust.GROUND


def test_it_refuses_a_tampered_hash(owner_page, live_server, make_note, screenshot):
    node = _proposed(make_note)
    owner_page.goto(f"{live_server.url}/review/{node.pk}/root/")
    owner_page.get_by_label("Your adopting words").fill("I adopt it.")
    owner_page.evaluate(
        "document.querySelector('input[name=expected_body_hash]').value = '0'.repeat(64)"
    )
    owner_page.get_by_role("button", name=f"Root #{node.pk}").click()
    error = owner_page.locator("#root-error")
    assert "nothing was written" in error.inner_text()
    assert "not the text stored" in error.inner_text()
    screenshot(owner_page, "review-root-tampered")
    assert not Event.objects.filter(node=node, kind="rooted").exists()
    assert trust_of(node.pk) == Trust.PROPOSED


def test_it_supersedes_through_preview_and_confirm(owner_page, live_server, make_note, screenshot):
    old = _ground(make_note)
    owner_page.goto(f"{live_server.url}/review/{old.pk}/")
    owner_page.get_by_role("link", name="Supersede with a correction").click()
    owner_page.get_by_label("Corrected text").fill(
        "<think>which key?</think>The spare key is with Bo now.\nSince May."
    )
    owner_page.get_by_role("button", name="Preview").click()
    preview = owner_page.locator("#preview-body")
    assert preview.inner_text() == "The spare key is with Bo now.\nSince May."
    screenshot(owner_page, "review-supersede-preview")
    owner_page.get_by_label("Your adopting words").fill("Bo has it since May.")
    owner_page.get_by_role("button", name=f"Confirm and supersede #{old.pk}").click()
    owner_page.wait_for_url(f"{live_server.url}/review/{old.pk}/superseded/")
    assert "The spare key is with Ana." in owner_page.locator("#old").inner_text()
    assert "with Bo now" in owner_page.locator("#new").inner_text()
    assert "ground" in owner_page.locator("#new dl").inner_text()
    screenshot(owner_page, "review-superseded-side-by-side")
    assert trust_of(old.pk) == Trust.SUPERSEDED


def test_keep_swaps_its_row_in_place(owner_page, live_server, make_note, screenshot):
    old, older = _pending(make_note)
    owner_page.goto(f"{live_server.url}/review/decays/")
    screenshot(owner_page, "review-decays")
    _mark(owner_page)
    kept = owner_page.locator(f"#node-{old.pk}")
    assert "no agent read it; nothing you keep depends on it; " in kept.inner_text()
    kept.get_by_role("button", name=f"Keep #{old.pk}").click()
    owner_page.locator(f"#node-{old.pk}:has-text('Kept.')").wait_for()
    assert _stayed(owner_page)
    screenshot(owner_page, "review-decays-decided")
    old.refresh_from_db()
    older.refresh_from_db()
    # Keep is its own root reason, on the record, and not a read.
    kept_events = Event.objects.filter(node_id=old.pk, kind=EventKind.KEPT, reason="owner_keep")
    assert kept_events.count() == 1
    assert (old.access_count, older.decayed_at) == (0, None)


def test_it_declines_from_the_queue_in_place(owner_page, live_server, make_note, screenshot):
    node = _proposed(make_note)
    owner_page.goto(f"{live_server.url}/review/")
    _mark(owner_page)
    owner_page.get_by_role("button", name=f"Decline #{node.pk}").click()
    owner_page.locator(f"#node-{node.pk}:has-text('Declined')").wait_for()
    assert _stayed(owner_page)
    screenshot(owner_page, "review-declined")
    assert trust_of(node.pk) == Trust.UNREVIEWED


def test_it_seals_and_unseals_from_the_queue(owner_page, live_server, make_note, screenshot):
    node = _proposed(make_note)
    owner_page.goto(f"{live_server.url}/review/")
    _mark(owner_page)
    row = owner_page.locator(f"#node-{node.pk}")
    assert "boiler" in row.inner_text()
    row.get_by_role("button", name="Seal").click()
    owner_page.locator(f"#node-{node.pk}:has-text('sealed #{node.pk}')").wait_for()
    assert "boiler" not in row.inner_text()
    screenshot(owner_page, "review-sealed")
    row.get_by_role("button", name=f"Unseal #{node.pk}").click()
    owner_page.locator(f"#node-{node.pk}:has-text('boiler')").wait_for()
    assert _stayed(owner_page) and trust_of(node.pk) == Trust.PROPOSED


def test_hostile_bodies_stay_text_and_fit(owner_page, live_server, make_note, screenshot):
    dialogs: list[str] = []
    owner_page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    from memory.forgetting import let_go
    from review.ceremony import preview_supersede, supersede

    stale = make_note("stale " + HOSTILE, days_old=20)
    node = _proposed(make_note, HOSTILE)
    ground = _ground(make_note, "ground " + HOSTILE)
    old = _ground(make_note, "old " + HOSTILE)
    let_go(stale.out_edges.get().to_node_id, actor="owner")  # after: notes derive from it
    new = preview_supersede("new " + HOSTILE)
    supersede(
        old.pk,
        new_body=new["body"],
        adopting_words=HOSTILE[:1500],
        expected_body_hash=new["body_hash"],
        owner="owner",
    )
    pages = {
        "queue": "/review/",
        "root": f"/review/{node.pk}/root/",
        "panel": f"/review/{node.pk}/",
        "supersede": f"/review/{ground.pk}/supersede/",
        "superseded": f"/review/{old.pk}/superseded/",
        "decays": "/review/decays/",
    }
    for name, path in pages.items():
        owner_page.goto(live_server.url + path)
        assert "<script>alert(1)</script>" in owner_page.locator("main").inner_text(), name
        assert _fits(owner_page), name
        screenshot(owner_page, f"review-hostile-{name}")
    owner_page.set_viewport_size({"width": 600, "height": 900})
    owner_page.goto(f"{live_server.url}/review/")
    assert _fits(owner_page)
    screenshot(owner_page, "review-hostile-queue-narrow")
    assert dialogs == []
