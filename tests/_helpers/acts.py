"""The owner's acts as tests perform them: adopting exactly what is stored."""

from __future__ import annotations

from review.ceremony import preview_supersede, root, supersede

OWNER = "owner"


def root_as_owner(node, words: str = "I adopt this."):
    """Root `node` with the hash of its stored body, as the root screen submits it."""
    return root(node.pk, adopting_words=words, expected_body_hash=node.body_hash, owner=OWNER)


def supersede_as_owner(node, text: str, words: str = "y"):
    """Supersede `node` with `text`, confirming the hash its preview showed."""
    return supersede(
        node.pk,
        new_body=text,
        adopting_words=words,
        expected_body_hash=preview_supersede(text)["body_hash"],
        owner=OWNER,
    )
