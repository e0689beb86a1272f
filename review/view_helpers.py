"""Small helpers shared by the review screens that know Grove's nodes and owner (the htmx
plumbing they share with the dashboard lives in web.htmx)."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404

from memory.models import Node


def get_node_or_404(node_id: int) -> Node:
    """Any node, in any domain: the owner sees all. A sealed node is found too, and every
    review template shows nothing of it but its id."""
    return get_object_or_404(Node, pk=node_id)


def owner_name(request: HttpRequest) -> str:
    """The actor for the owner's acts: the signed-in account ("owner")."""
    return request.user.get_username()
