"""Each act checks its precondition inside the write lock, on rows read under it.

Another writer acts just before the act's transaction begins (the lock is taken there: BEGIN
IMMEDIATE on SQLite, the advisory lock on PostgreSQL). An act that checked before the lock, or
on a row read before it, would go ahead on a state that no longer holds; each must refuse.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction

import memory.forgetting as forgetting
import memory.sleep.promote as promoting
import memory.tokens as tokens
import review.ceremony as ceremony
from memory.errors import Conflict, NotFound
from memory.models import Event, Node
from tests._helpers.acts import root_as_owner, supersede_as_owner
from tests._helpers.events import mark

OWNER = "owner"


class _FirstAtomicRaces:
    """Stands in for django.db.transaction in one module: another writer acts just before that
    module's first atomic() takes the lock; everything else is Django's own."""

    def __init__(self, other_writer: Callable[[], Any]) -> None:
        self.other_writer = other_writer
        self.fired = False

    def atomic(self, *args: Any, **kwargs: Any) -> Any:
        if not self.fired:
            self.fired = True
            self.other_writer()
        return transaction.atomic(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(transaction, name)


@pytest.fixture
def just_before_the_lock(monkeypatch) -> Callable[[Any, Callable[[], Any]], None]:
    def race(module: Any, other_writer: Callable[[], Any]) -> None:
        monkeypatch.setattr(module, "transaction", _FirstAtomicRaces(other_writer))

    return race


def _refused(code: str, act: Callable[[], Any], exc: type[Exception] = Conflict) -> None:
    with pytest.raises(exc) as refused:
        act()
    assert refused.value.code == code  # type: ignore[attr-defined]


def test_root_refuses_a_node_sealed_just_before_the_lock(make_note, just_before_the_lock):
    node = make_note("The spare key is under the blue pot.")
    just_before_the_lock(ceremony, lambda: ceremony.seal(node.pk, owner=OWNER))
    _refused("is_sealed", lambda: root_as_owner(node))
    assert not Event.objects.filter(node=node, kind="rooted").exists()


def test_root_refuses_a_node_decayed_just_before_the_lock(make_note, just_before_the_lock):
    node = make_note("The spare key is under the blue pot.")
    just_before_the_lock(ceremony, lambda: forgetting.let_go(node.pk, actor=OWNER))
    _refused("decayed", lambda: root_as_owner(node))


def test_root_refuses_a_node_rejected_just_before_the_lock(make_note, just_before_the_lock):
    node = make_note("The spare key is under the blue pot.")
    just_before_the_lock(ceremony, lambda: mark(node, "rejected"))
    _refused("is_rejected", lambda: root_as_owner(node))


def test_promote_leaves_a_node_decayed_just_before_the_lock(make_note, just_before_the_lock):
    due = make_note("Read on many days.")
    Node.objects.filter(pk=due.pk).update(access_count=9, read_days=9)
    just_before_the_lock(promoting, lambda: forgetting.let_go(due.pk, actor=OWNER))
    assert promoting.promote()["count"] == 0
    due.refresh_from_db()
    assert not due.permanent


def test_reject_refuses_a_node_rooted_just_before_the_lock(make_note, just_before_the_lock):
    node = make_note("The boiler was serviced in March.")
    just_before_the_lock(ceremony, lambda: root_as_owner(node))
    _refused("is_ground", lambda: ceremony.reject(node.pk, owner=OWNER, reason="wrong"))


def test_reject_refuses_a_node_rejected_just_before_the_lock(make_note, just_before_the_lock):
    node = make_note("The boiler was serviced in March.")
    just_before_the_lock(ceremony, lambda: mark(node, "rejected"))
    _refused("is_rejected", lambda: ceremony.reject(node.pk, owner=OWNER, reason="wrong"))


def test_supersede_refuses_a_node_superseded_just_before_the_lock(make_note, just_before_the_lock):
    node = make_note("The boiler was serviced in March.")
    root_as_owner(node)
    just_before_the_lock(ceremony, lambda: supersede_as_owner(node, "Serviced in April."))
    _refused("not_ground", lambda: supersede_as_owner(node, "Serviced in May."))
    assert not Node.objects.filter(body="Serviced in May.").exists()


def test_seal_and_unseal_refuse_what_another_did_just_before_the_lock(
    make_note, just_before_the_lock
):
    node = make_note("The safe code is 4-8-15.")
    just_before_the_lock(ceremony, lambda: ceremony.seal(node.pk, owner=OWNER))
    _refused("is_sealed", lambda: ceremony.seal(node.pk, owner=OWNER))
    just_before_the_lock(ceremony, lambda: ceremony.unseal(node.pk, owner=OWNER))
    _refused("not_sealed", lambda: ceremony.unseal(node.pk, owner=OWNER))


def test_decline_refuses_a_proposal_rooted_just_before_the_lock(make_note, just_before_the_lock):
    node = make_note("The garden tap leaks.")
    ceremony.propose(node.pk, actor="agent:scout")
    just_before_the_lock(ceremony, lambda: root_as_owner(node))
    _refused("not_proposed", lambda: ceremony.decline(node.pk, owner=OWNER))
    assert not Event.objects.filter(node=node, kind="declined").exists()


def test_keep_refuses_a_node_let_go_just_before_the_lock(make_note, just_before_the_lock):
    node = make_note("Old receipts.")
    just_before_the_lock(forgetting, lambda: mark(node, "decayed"))
    _refused("decayed", lambda: forgetting.keep(node.pk, actor=OWNER))
    assert not Event.objects.filter(node=node, kind="kept").exists()


def test_restore_refuses_a_node_restored_just_before_the_lock(make_note, just_before_the_lock):
    node = make_note("Old receipts.")
    forgetting.let_go(node.pk, actor=OWNER)
    just_before_the_lock(
        forgetting, lambda: Node.objects.filter(pk=node.pk).update(decayed_at=None)
    )
    _refused("live", lambda: forgetting.restore(node.pk, actor=OWNER))


def test_let_go_refuses_a_node_rooted_just_before_the_lock(make_note, just_before_the_lock):
    node = make_note("Old receipts.")
    just_before_the_lock(forgetting, lambda: root_as_owner(node))
    _refused("is_ground", lambda: forgetting.let_go(node.pk, actor=OWNER))
    node.refresh_from_db()
    assert node.decayed_at is None


def test_a_token_change_refuses_a_token_revoked_just_before_the_lock(db, just_before_the_lock):
    tokens.create_token(name="scout", domains=["personal"])
    just_before_the_lock(tokens, lambda: tokens.revoke_token(name="scout"))
    _refused("not_found", lambda: tokens.change_token(name="scout", read_only=True), NotFound)
    assert tokens.ApiToken.objects.get(name="scout").read_only is False
