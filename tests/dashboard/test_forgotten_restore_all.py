"""/forgotten/'s Restore all matching: the filtered decayed nodes come back as one batch, after
a confirmation that shows the count, the filter in words and a sample; its undo lets them go
again; a sealed or rejected node stays forgotten."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memory.forgetting import let_go
from memory.models import Event, Node
from review.ceremony import reject, seal


@pytest.fixture
def forgotten(lone):
    """Three herons and an otter, let go; a heron sealed and one rejected, both decayed."""
    nodes = {
        name: lone(f"{body} #{name}", days_old=40)
        for name, body in (
            ("a", "A heron by the pond"),
            ("b", "A heron at dawn"),
            ("otter", "An otter at dusk"),
            ("sealed", "A heron, sealed"),
            ("rejected", "A heron, rejected"),
        )
    }
    for name in ("a", "b", "otter", "rejected"):
        let_go(nodes[name].pk, actor="owner")
    reject(nodes["rejected"].pk, owner="owner", reason="false")
    seal(nodes["sealed"].pk, owner="owner")
    Node.objects.filter(pk=nodes["sealed"].pk).update(decayed_at=timezone.now())
    return {name: node.pk for name, node in nodes.items()}


def _live(ids):
    return set(
        Node.objects.filter(pk__in=ids, decayed_at__isnull=True).values_list("id", flat=True)
    )


def test_restore_all_matching_asks_first_with_the_count_and_the_filter(owner_client, forgotten):
    ask = owner_client.get("/forgotten/restore/?kind=internet&origin=https")
    html = ask.content.decode()
    assert ask.status_code == 200 and "Restore 3 forgotten nodes?" in html
    assert "of kind internet" in html and f"#{forgotten['otter']}" in html
    assert "2 sealed or rejected nodes also match and stay forgotten" in html
    assert "A heron, sealed" not in html and "A heron, rejected" not in html
    assert _live(forgotten.values()) == set()


def test_restore_all_matching_restores_exactly_the_filtered_ones_as_one_batch(
    owner_client, forgotten
):
    assert Node.objects.filter(pk=forgotten["otter"], decayed_at__isnull=False).exists()
    done = owner_client.post("/forgotten/restore/", {"q": "heron", "confirmed": "yes"})
    assert done.status_code == 302 and "batch=" in done["Location"]
    assert _live(forgotten.values()) == {forgotten["a"], forgotten["b"]}
    batches = {e.detail["batch"] for e in Event.objects.filter(kind="restored")}
    assert len(batches) == 1


def test_a_sealed_or_rejected_node_is_never_restored_by_it(owner_client, forgotten):
    owner_client.post("/forgotten/restore/", {"kind": "internet", "confirmed": "yes"})
    assert _live(forgotten.values()) == {forgotten["a"], forgotten["b"], forgotten["otter"]}


def test_undo_lets_the_batch_go_again(owner_client, forgotten):
    done = owner_client.post("/forgotten/restore/", {"q": "heron", "confirmed": "yes"})
    batch = done["Location"].split("batch=")[1].split("&")[0]
    assert f"/review/batches/{batch}/undo/" in owner_client.get(done["Location"]).content.decode()
    owner_client.post(f"/review/batches/{batch}/undo/", {"next": "/forgotten/"})
    assert _live(forgotten.values()) == set()
    again = Event.objects.filter(kind="decayed", reason="batch_undone")
    assert set(again.values_list("node_id", flat=True)) == {forgotten["a"], forgotten["b"]}


def test_forgotten_links_to_restore_all_matching_with_its_filter(owner_client, forgotten):
    html = owner_client.get("/forgotten/?q=heron").content.decode()
    assert 'href="/forgotten/restore/?q=heron"' in html


def test_a_bad_day_is_refused_and_nothing_is_restored(owner_client, forgotten):
    done = owner_client.post("/forgotten/restore/", {"since": "soon", "confirmed": "yes"})
    assert done.status_code == 400 and _live(forgotten.values()) == set()
