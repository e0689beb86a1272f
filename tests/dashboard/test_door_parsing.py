"""One parser at the dashboard's door: Unicode digits, overflowing ids, NUL and lone
surrogates in any form field or filter answer 400 (or the page's own refusal), never a 500, and
the owner's forms write nothing from them."""

from __future__ import annotations

import pytest

from memory import questions

SUPERSCRIPT_TWO = "\u00b2"  # "²": str.isdigit() says yes, int() raises
ARABIC_THREE = "\u0663"  # "٣": int() silently reads 3
HUGE = "99999999999999999999"  # past SQLite's 64-bit integers


@pytest.mark.parametrize(
    "path",
    [
        "/search/?q=x%00y",
        "/audit/?actor=%00",
        "/audit/export.csv?actor=%00",
        "/audit/export.json?actor=%00",
        "/nodes/?domain=a%00",
        "/review/?agent=%00",
        "/review/decays/?within=%00",
        "/review/questions/?about=%00",
        "/forgotten/?q=%00",
        "/?x%00=1",
    ],
)
def test_a_nul_in_any_filter_is_refused_with_a_400(owner_client, path):
    response = owner_client.get(path)
    assert response.status_code == 400
    assert not getattr(response, "streaming", False)


def test_a_nul_in_a_form_field_is_refused_and_writes_nothing(owner_client, root_note, counts):
    before = counts()
    response = owner_client.post(
        "/review/questions/plant/", {"body": "why\x00", "about": str(root_note.pk)}
    )
    assert response.status_code == 400
    assert counts() == before


@pytest.mark.parametrize("about", [SUPERSCRIPT_TWO, ARABIC_THREE, HUGE])
def test_a_question_about_a_non_id_plants_nothing(owner_client, root_note, counts, about):
    before = counts()
    response = owner_client.post("/review/questions/plant/", {"body": "why?", "about": about})
    assert response.status_code in (302, 400)
    assert counts() == before


@pytest.mark.parametrize("raw", [SUPERSCRIPT_TWO, ARABIC_THREE, HUGE])
def test_feeding_a_question_a_non_id_writes_nothing(owner_client, root_note, counts, raw):
    question = questions.plant_question(
        "why?", about=[root_note.pk], signature="owner", domain="personal"
    )
    before = counts()
    response = owner_client.post(f"/review/questions/{question.pk}/feed/", {"node": raw})
    assert response.status_code in (302, 400)
    assert counts() == before


@pytest.mark.parametrize("raw", [SUPERSCRIPT_TWO, ARABIC_THREE, HUGE])
def test_an_undo_offer_for_a_non_id_is_no_offer(owner_client, raw):
    assert owner_client.get("/review/decays/", {"let_go": raw}).status_code == 200


@pytest.mark.parametrize("raw", [SUPERSCRIPT_TWO, HUGE])
def test_bulk_ids_that_are_not_ids_act_on_nothing(owner_client, counts, raw):
    before = counts()
    response = owner_client.post("/review/bulk/", {"action": "decline", "ids": raw, "reason": "no"})
    assert response.status_code in (200, 302, 400)
    assert counts() == before


@pytest.mark.parametrize("raw", [SUPERSCRIPT_TWO, ARABIC_THREE, HUGE])
def test_a_links_to_filter_that_is_not_an_id_is_refused(owner_client, raw):
    assert owner_client.get("/nodes/", {"links_to": raw}).status_code == 400


@pytest.mark.parametrize("raw", [SUPERSCRIPT_TWO, ARABIC_THREE, HUGE])
def test_an_audit_node_filter_that_is_not_an_id_is_refused(owner_client, raw):
    assert owner_client.get("/audit/", {"node": raw}).status_code == 400


@pytest.mark.parametrize("raw", [SUPERSCRIPT_TWO, ARABIC_THREE])
def test_a_page_or_age_in_other_digits_is_read_as_no_number(owner_client, root_note, raw):
    assert owner_client.get("/review/", {"age": raw, "page": raw}).status_code == 200
    assert owner_client.get("/search/", {"q": "seed", "page": raw}).status_code == 200


@pytest.mark.parametrize(
    "path", ["/node/{}/", "/review/{}/", "/review/questions/{}/", "/review/{}/why/"]
)
def test_an_overflowing_id_in_a_page_path_is_not_found(owner_client, path):
    assert owner_client.get(path.format(HUGE)).status_code == 404


@pytest.mark.parametrize("target", ["\ufffd", "overview", "javascript:alert(1)"])
def test_a_next_that_is_not_a_local_path_goes_back_to_the_default(owner_client, root_note, target):
    question = questions.plant_question(
        "why?", about=[root_note.pk], signature="owner", domain="personal"
    )
    response = owner_client.post(
        f"/review/questions/{question.pk}/feed/", {"node": str(root_note.pk), "next": target}
    )
    assert response.status_code == 302
    assert response["Location"].startswith("/")
