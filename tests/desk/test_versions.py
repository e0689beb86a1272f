"""History like a pull request: a supersession chain as versions with each step's diff, the
no-op supersede refused at the preview and at confirm, and "why" on a superseded node."""

from __future__ import annotations

import pytest

from memory.errors import Invalid
from review.ceremony import supersede
from review.versions import history, inline, pieces, side_by_side
from tests._helpers.acts import root_as_owner, supersede_as_owner

DOCTOR = "The owner's doctor is Dr. Ana Costa at the Alvalade clinic."


@pytest.fixture
def chain(make_note):
    first = make_note(DOCTOR)
    root_as_owner(first)
    second = supersede_as_owner(first, DOCTOR.replace("Alvalade", "Campo de Ourique"))
    third = supersede_as_owner(second, second.body.replace("Ana Costa", "Rui Lopes"))
    return first, second, third


def test_changed_runs_of_words_are_grouped_not_interleaved():
    diff = str(inline(pieces("at the Alvalade clinic today.", "at the Campo de Ourique clinic.")))
    assert diff == "at the <del>Alvalade clinic today.</del><ins>Campo de Ourique clinic.</ins>"


def test_a_chain_is_versions_from_any_of_its_nodes(chain):
    for n, node in enumerate(chain, start=1):
        found = history(node)
        assert (found.current, found.total) == (n, 3)
        assert [v.node.pk for v in found.versions] == [c.pk for c in chain]


def test_the_node_page_shows_the_version_and_both_diffs(owner_client, chain):
    html = owner_client.get(f"/node/{chain[1].pk}/").content.decode()
    assert "version 2 of 3" in html
    assert "<del>Alvalade</del><ins>Campo de Ourique</ins>" in html
    assert "<del>Ana Costa</del><ins>Rui Lopes</ins>" in html


def test_a_node_never_superseded_has_no_history(owner_client, make_note):
    assert (
        'id="versions"' not in owner_client.get(f"/node/{make_note('Lone.').pk}/").content.decode()
    )


def test_the_no_op_supersede_is_refused_at_the_preview(owner_client, chain):
    third = chain[2]
    response = owner_client.post(
        f"/review/{third.pk}/supersede/", {"step": "preview", "new_body": third.body + "  \n"}
    )
    assert response.status_code == 400
    assert "words are the words already there" in response.content.decode()
    assert 'id="preview-diff"' not in response.content.decode()


def test_the_no_op_supersede_is_refused_at_confirm_with_a_400(owner_client, chain):
    third = chain[2]
    response = owner_client.post(
        f"/review/{third.pk}/supersede/",
        {
            "step": "confirm",
            "new_body": third.body,
            "adopting_words": "Same.",
            "expected_body_hash": third.body_hash,
        },
    )
    assert response.status_code == 400
    with pytest.raises(Invalid, match="same words"):
        supersede(
            third.pk,
            new_body=third.body,
            adopting_words="y",
            expected_body_hash=third.body_hash,
            owner="owner",
        )


def test_why_on_a_superseded_node_is_a_page_saying_what_replaced_it(owner_client, chain):
    response = owner_client.get(f"/review/{chain[0].pk}/why/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'you replaced it with <a href="/review/{chain[1].pk}/why/">#{chain[1].pk}</a>' in html
    assert "version 1 of 3" in html


def test_both_sides_of_the_diff_are_escaped():
    hostile = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    left, right = side_by_side(pieces("safe words", f"safe {hostile} words"))
    assert "<script>" not in left + right and "<img" not in right
    assert "&lt;script&gt;" in right
