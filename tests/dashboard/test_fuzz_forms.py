"""Fuzz of the owner's pages and forms (dashboard and desk): any text in any filter or form
field answers a page or a 4xx, never a server error, and a streamed export is never cut short.
Fixed seed, bounded examples (tests/_helpers/hostile.py)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory import questions
from tests._helpers.hostile import FORM_TEXT, FUZZ

PAGES = [
    "/", "/search/", "/nodes/", "/forgotten/", "/audit/", "/audit/export.csv",
    "/audit/export.json", "/review/", "/review/decays/", "/review/questions/", "/tokens/",
    "/sleep/", "/node/{id}/", "/review/{id}/", "/review/{id}/why/", "/review/{id}/reject/",
]  # fmt: skip
FORMS = [
    "/review/questions/plant/", "/review/questions/{q}/feed/", "/review/bulk/",
    "/node/{id}/extract/", "/node/{id}/restore/", "/review/{id}/reject/", "/review/{id}/root/",
    "/review/{id}/supersede/", "/review/decays/{id}/keep/", "/review/decays/{id}/let-go/",
    "/tokens/new/",
]  # fmt: skip
FIELDS = [
    "q", "scope", "domain", "kind", "trust", "jurisdiction", "actor", "node", "since", "until",
    "page", "as_of", "sort", "links_to", "near", "age", "agent", "within", "let_go", "about",
    "body", "ids", "action", "reason", "confirmed", "typed", "start", "end", "event", "text",
    "name", "domains", "read_only", "new_body", "adopting_words", "step", "expected_body_hash",
    "next", "superseded", "decayed", "verify",
]  # fmt: skip
VALUES = st.dictionaries(st.sampled_from(FIELDS), FORM_TEXT, max_size=4)


@pytest.fixture
def scene(owner_client, root_note):
    question = questions.plant_question(
        "why?", about=[root_note.pk], signature="owner", domain="personal"
    )
    return owner_client, {"id": root_note.pk, "q": question.pk}


def _query(fields: dict[str, str]) -> str:
    return "&".join(f"{k}={quote(v, safe='', errors='surrogatepass')}" for k, v in fields.items())


@FUZZ
@given(page=st.sampled_from(PAGES), fields=VALUES)
def test_no_page_answers_a_server_error(scene, page, fields):
    client, ids = scene
    response = client.get(f"{page.format(**ids)}?{_query(fields)}")
    assert response.status_code < 500, (page, fields)
    if getattr(response, "streaming", False):
        b"".join(response.streaming_content)  # the whole stream, or the test fails here


@FUZZ
@given(form=st.sampled_from(FORMS), fields=VALUES)
def test_no_form_answers_a_server_error(scene, form, fields):
    client, ids = scene
    body = _query(fields)
    response = client.post(
        form.format(**ids), data=body, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code < 500, (form, fields)
