"""Every act answers only a POST that carries the CSRF token: walked from the URL patterns, so a
new act cannot miss it. A GET carrying an act's confirming parameters changes nothing; a POST
without the token is refused (403) and changes nothing."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from dashboard.urls import urlpatterns as dashboard_urls
from memory.models import ApiToken, Edge, Event, Node, SleepRun
from review.urls import urlpatterns as review_urls
from tests._helpers.acts import root_as_owner

ROUTES = sorted(
    p.name for p in dashboard_urls + review_urls if isinstance(p, URLPattern) and p.name
)
CONFIRMING = {
    "confirmed": "yes",
    "confirm": "yes",
    "count": "1",
    "typed": "1",
    "act": "let_go",
    "action": "reject",
    "reason": "a get must not act",
    "adopting_words": "I adopt this.",
    "name": "walker",
    "domains": "personal",
    "body": "A question?",
    "about": "1",
    "node": "1",
}


def _record() -> tuple[int, ...]:
    """What any act would change: the record and every table an act writes."""
    decayed = Node.objects.filter(decayed_at__isnull=False).count()
    return (
        Event.objects.count(),
        Node.objects.count(),
        decayed,
        Edge.objects.count(),
        SleepRun.objects.count(),
        ApiToken.objects.count(),
    )


@pytest.fixture
def nodes(make_note) -> dict[str, int]:
    from memory.forgetting import let_go
    from memory.questions import plant_question
    from review.ceremony import propose

    ground = make_note("A ground quokka.")
    root_as_owner(ground)
    proposed = make_note("A proposed quokka.")
    propose(proposed.pk, actor="agent:scout")
    decayed = make_note("A forgotten quokka.", days_old=30)
    let_go(decayed.pk, actor="owner")
    from memory.tokens import create_token

    stale = make_note("A stale quokka.", days_old=400)
    create_token(name="walker", domains=["personal"])
    question = plant_question("Where do quokkas nap?", about=[ground.pk], signature="owner")
    return {
        "ground": ground.pk,
        "proposed": proposed.pk,
        "decayed": decayed.pk,
        "stale": stale.pk,
        "question": question.pk,
    }


def _urls(name: str, nodes: dict[str, int]) -> list[str]:
    pattern = next(p for p in dashboard_urls + review_urls if p.name == name)
    converters = pattern.pattern.converters  # type: ignore[attr-defined]  # a RoutePattern
    if name == "login_link":
        return []
    if "name" in converters:  # a token's governing form
        return [reverse(name, kwargs={"name": "walker"})]
    if "key" in converters:  # the waiting feed reads, it never acts
        return [reverse(name, kwargs={"key": "0" * 32})]
    if "batch" in converters:
        return [reverse(name, kwargs={"batch": "0" * 16})]
    if "question_id" in converters:
        return [reverse(name, kwargs={"question_id": nodes["question"]})]
    if "node_id" in converters:
        ids = (nodes[k] for k in ("ground", "proposed", "decayed", "stale"))
        return [reverse(name, kwargs={"node_id": i}) for i in ids]
    return [reverse(name)]


@pytest.mark.parametrize("name", ROUTES)
def test_a_get_with_confirming_parameters_changes_nothing(owner_client, nodes, name):
    before = _record()
    for url in _urls(name, nodes):
        answer = owner_client.get(url, CONFIRMING)
        assert answer.status_code < 500, url
    if name == "logout":
        return  # signing out is the session's, never the memory's
    assert _record() == before


@pytest.mark.parametrize("name", ROUTES)
def test_a_post_without_the_csrf_token_is_refused_and_changes_nothing(nodes, name):
    from dashboard.owner import ensure_owner

    client = Client(enforce_csrf_checks=True)
    client.force_login(ensure_owner())
    before = _record()
    for url in _urls(name, nodes):
        assert client.post(url, CONFIRMING).status_code == 403, url
    assert _record() == before


def test_the_walk_holds_the_acts_it_claims(owner_client, nodes):
    # The fixture can be acted on: the same let-go with the token changes the record.
    before = _record()
    answer = owner_client.post(
        reverse("decay_let_go", kwargs={"node_id": nodes["stale"]}), {"confirmed": "yes"}
    )
    assert answer.status_code == 302 and _record() != before
    assert {"decay_let_go", "review_reject", "review_root", "review_bulk"} <= set(ROUTES)
