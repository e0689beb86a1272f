"""The node page as of a moment: the graph as it stood then, never its future, and never words
that are rejected or sealed now (dashboard/node_views.py, dashboard/graph.py)."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.utils import timezone

from review.ceremony import reject, seal
from tests._helpers.acts import root_as_owner, supersede_as_owner

WORDS = "Saffron pelican ledger"


def _pair(make_note):
    """A centre and a neighbour holding WORDS, with their edge, written five days ago."""
    with time_machine.travel(timezone.now() - timedelta(days=5), tick=True):
        centre = make_note("The centre of the picture.")
        near = make_note(f"{WORDS} beside it.", origins=[{"id": centre.pk}])
    return centre, near


def _yesterday() -> str:
    return (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")


def test_as_of_shows_no_replacement_made_later(owner_client, make_note):
    old = make_note("The boiler is serviced in May.", days_old=5)
    root_as_owner(old)
    new = supersede_as_owner(old, "The boiler is serviced in June.")
    assert "Replaced by" in owner_client.get(f"/node/{old.pk}/").content.decode()
    body = owner_client.get(f"/node/{old.pk}/", {"as_of": _yesterday()}).content.decode()
    assert "Replaced by" not in body
    assert new is not None


def test_as_of_before_a_rejection_shows_no_rejected_words(owner_client, make_note):
    node = make_note(f"{WORDS} is the password hint.", days_old=5)
    reject(node.pk, owner="owner", reason="false")
    body = owner_client.get(f"/node/{node.pk}/", {"as_of": _yesterday()}).content.decode()
    assert body.count("Saffron") == 0


def test_as_of_shows_no_words_of_a_neighbour_rejected_later(owner_client, make_note):
    centre, near = _pair(make_note)
    then = owner_client.get(f"/node/{centre.pk}/", {"as_of": _yesterday()}).content.decode()
    assert f'id="gnode-{near.pk}"' in then and "Saffron" in then  # the fixture shows its words
    reject(near.pk, owner="owner", reason="false")
    body = owner_client.get(f"/node/{centre.pk}/", {"as_of": _yesterday()}).content.decode()
    assert f'id="gnode-{near.pk}"' in body and "Saffron" not in body


def test_as_of_shows_no_words_of_a_neighbour_sealed_later(owner_client, make_note):
    centre, near = _pair(make_note)
    seal(near.pk, owner="owner")
    body = owner_client.get(f"/node/{centre.pk}/", {"as_of": _yesterday()}).content.decode()
    assert f'id="gnode-{near.pk}"' in body and "Saffron" not in body
