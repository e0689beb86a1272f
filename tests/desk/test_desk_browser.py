"""The owner's desk in real Chromium: the two noes, bulk decline, keyboard review, the
supersede diff, a question's life, "why is this true", let go with Undo. Every page is shot at
1280 and 400 px into test-results/screenshots/desk-*.png."""

from __future__ import annotations

import pytest

from memory.models import Node, Trust
from memory.questions import is_open
from memory.trust import trust_of
from review.ceremony import propose
from tests._helpers.acts import root_as_owner

pytestmark = pytest.mark.browser


@pytest.fixture
def shots(screenshot):
    """Shoot the page at 1280 px and at 400 px (where it must not scroll sideways)."""

    def take(page, name: str) -> None:
        screenshot(page, f"desk-{name}-1280")
        page.set_viewport_size({"width": 400, "height": 800})
        screenshot(page, f"desk-{name}-400")
        fits = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 2")
        page.set_viewport_size({"width": 1280, "height": 720})
        assert fits, f"{name} scrolls sideways at 400 px"

    return take


def _proposals(make_note, n: int, agent: str, **fields) -> list[Node]:
    nodes = []
    for i in range(n):
        node = make_note(f"{agent} thinks fact {i} matters.", **fields)
        propose(node.pk, actor=agent, reason=f"seen {i + 2} times")
        nodes.append(node)
    return nodes


def test_decline_keeps_the_node_and_reject_asks_first(owner_page, live_server, make_note, shots):
    keep, drop = _proposals(make_note, 2, "agent:scout")
    owner_page.goto(f"{live_server.url}/review/")
    shots(owner_page, "queue")
    owner_page.get_by_role("button", name=f"Decline #{keep.pk}").click()
    owner_page.locator(f"#node-{keep.pk}:has-text('Declined')").wait_for()
    assert trust_of(keep.pk) == Trust.UNREVIEWED and Node.objects.get(pk=keep.pk).is_live
    owner_page.locator(f"#node-{drop.pk}").get_by_role("link", name="Reject as false…").click()
    assert "What rejecting does" in owner_page.locator("#reject-consequences").inner_text()
    assert trust_of(drop.pk) == Trust.PROPOSED  # asking wrote nothing
    owner_page.get_by_label("Why is it false?").fill("the agent made it up")
    shots(owner_page, "reject-confirm")
    owner_page.get_by_role("button", name=f"Yes, reject #{drop.pk} as false").click()
    owner_page.wait_for_url(f"{live_server.url}/review/")  # back to the queue it came from
    assert "Rejected #" in owner_page.locator(".messages").inner_text()
    owner_page.goto(f"{live_server.url}/review/{drop.pk}/")
    assert "thinks fact 1" not in owner_page.locator("main").inner_text()
    assert owner_page.locator("#tombstone").is_visible()
    shots(owner_page, "rejected-panel")
    assert trust_of(drop.pk) == Trust.REJECTED


def test_bulk_decline_of_fifty_from_one_agent_in_two_actions(
    owner_page, live_server, make_note, shots
):
    junk = _proposals(make_note, 56, "agent:junk")
    useful = _proposals(make_note, 3, "agent:scout", domain="work")
    owner_page.goto(f"{live_server.url}/review/")
    assert "Showing 1–50 of 59" in owner_page.locator("#queue-status").inner_text()
    owner_page.get_by_role("link", name="agent:junk · 56").click()  # action 1
    shots(owner_page, "queue-agent")
    owner_page.locator("#bulk-action").select_option("decline")
    owner_page.get_by_role("button", name="Apply to all 56 from agent:junk…").click()  # action 2
    assert "every proposal from agent:junk" in owner_page.locator("#bulk-filter").inner_text()
    owner_page.get_by_role("button", name="Yes, decline 56").click()
    owner_page.wait_for_load_state()
    assert "Declined: 56 nodes." in owner_page.locator(".messages").inner_text()
    assert {trust_of(n.pk) for n in junk} == {Trust.UNREVIEWED}
    assert {trust_of(n.pk) for n in useful} == {Trust.PROPOSED}


def test_bulk_reject_of_ticked_rows_goes_through_a_list(owner_page, live_server, make_note, shots):
    nodes = _proposals(make_note, 3, "agent:junk")
    owner_page.goto(f"{live_server.url}/review/")
    for node in nodes[:2]:
        owner_page.get_by_label(f"Tick #{node.pk}").check()
    owner_page.locator("#bulk-action").select_option("reject")
    owner_page.get_by_role("button", name="Apply to ticked…").click()
    assert owner_page.locator("#bulk-list li").count() == 2
    owner_page.get_by_label("Why are they false?").fill("made up")
    owner_page.get_by_label("Type 2 to reject 2 nodes").fill("2")
    shots(owner_page, "bulk-reject-confirm")
    owner_page.get_by_role("button", name="Yes, reject 2 as false").click()
    owner_page.wait_for_url(f"{live_server.url}/review/")
    assert [trust_of(n.pk) for n in nodes] == [Trust.REJECTED, Trust.REJECTED, Trust.PROPOSED]


def test_keyboard_review(owner_page, live_server, make_note, screenshot):
    first, second, third = _proposals(make_note, 3, "agent:scout")
    owner_page.goto(f"{live_server.url}/review/")
    owner_page.keyboard.press("j")
    assert owner_page.evaluate("document.activeElement.id") == f"node-{first.pk}"
    owner_page.keyboard.press("x")
    assert owner_page.get_by_label(f"Tick #{first.pk}").is_checked()
    owner_page.keyboard.press("j")
    owner_page.keyboard.press("d")
    owner_page.locator(f"#node-{second.pk}:has-text('Declined')").wait_for()
    owner_page.wait_for_function(f"document.activeElement.id === 'node-{third.pk}'")
    owner_page.keyboard.press("?")
    assert owner_page.locator("#keys-help").get_attribute("open") is not None
    screenshot(owner_page, "desk-keyboard")
    owner_page.keyboard.press("Escape")
    owner_page.locator(f"#node-{third.pk}").focus()
    owner_page.keyboard.press("r")
    owner_page.wait_for_url(f"{live_server.url}/review/{third.pk}/root/")
    assert trust_of(second.pk) == Trust.UNREVIEWED


def test_root_shows_origins_and_goes_on_to_the_next(owner_page, live_server, make_note, shots):
    first, second = _proposals(make_note, 2, "agent:scout")
    owner_page.goto(f"{live_server.url}/review/{first.pk}/root/")
    assert "Seed import" in owner_page.locator("#origins").inner_text()
    assert "seen 2 times" in owner_page.locator("#proposal-why").inner_text()
    shots(owner_page, "root")
    owner_page.get_by_label("Your adopting words").fill("Yes.")
    owner_page.get_by_role("button", name=f"Root #{first.pk}").click()
    owner_page.wait_for_url(f"{live_server.url}/review/{second.pk}/root/")
    assert trust_of(first.pk) == Trust.GROUND


def test_a_supersede_diff(owner_page, live_server, make_note, shots):
    old = make_note("The spare key is with Ana, under the blue pot.")
    root_as_owner(old)
    owner_page.goto(f"{live_server.url}/review/{old.pk}/supersede/")
    box = owner_page.get_by_label("Corrected text")
    assert box.input_value().strip() == old.body
    box.fill("The spare key is with Bo, under the blue pot.")
    owner_page.get_by_role("button", name="Preview").click()
    diff = owner_page.locator("#preview-diff")
    assert diff.locator("del").all_inner_texts() == ["Ana,"]
    assert diff.locator("ins").all_inner_texts() == ["Bo,"]
    owner_page.get_by_label("Your adopting words").fill("Bo has it now.")
    shots(owner_page, "supersede-diff")
    owner_page.get_by_role("button", name=f"Confirm and supersede #{old.pk}").click()
    owner_page.wait_for_url(f"{live_server.url}/review/{old.pk}/superseded/")
    owner_page.goto(f"{live_server.url}/review/{old.pk}/")
    assert "Replaced by" in owner_page.locator("#replaced-by").inner_text()
    shots(owner_page, "replaced-panel")


def test_why_is_this_true(owner_page, live_server, make_note, shots):
    node = make_note("The boiler is serviced every March.")
    propose(node.pk, actor="agent:scout", reason="three invoices say so")
    root_as_owner(node, "Yes: the invoices are in the drawer.")
    owner_page.goto(f"{live_server.url}/review/{node.pk}/")
    owner_page.get_by_role("link", name="Why is this true?").click()
    assert (
        owner_page.locator("#adopting-words").inner_text() == "Yes: the invoices are in the drawer."
    )
    assert owner_page.locator("#adopted-hash").inner_text() == node.body_hash
    assert "matches" in owner_page.locator("#hash-check").inner_text()
    assert "Seed import" in owner_page.locator("#provenance").inner_text()
    assert "three invoices" in owner_page.locator("main").inner_text()
    shots(owner_page, "why")


def test_a_questions_life(owner_page, live_server, make_note, shots):
    topic = make_note("The gutter overflows in storms.")
    clue = make_note("Leaves block the downpipe.")
    owner_page.goto(f"{live_server.url}/review/{topic.pk}/")
    owner_page.get_by_role("link", name=f"Ask a question about #{topic.pk}").click()
    assert owner_page.get_by_label("About node(s)").input_value() == str(topic.pk)
    owner_page.get_by_label("The question").fill("Who clears the gutter?")
    shots(owner_page, "questions")
    owner_page.get_by_role("button", name="Plant").click()
    assert owner_page.locator("#q-state").inner_text() == "open"
    owner_page.get_by_label("A node that bears on it (number)").fill(str(clue.pk))
    owner_page.get_by_role("button", name="Feed").click()
    assert "Leaves block" in owner_page.locator("#q-feeds").inner_text()
    owner_page.get_by_label("Write the answer").fill("Sam, every October.")
    owner_page.get_by_role("button", name="Answer").click()
    assert owner_page.locator("#q-state").inner_text() == "answered"
    owner_page.get_by_label("Why it is open again").fill("Sam moved away.")
    owner_page.get_by_role("button", name="Reopen").click()
    assert owner_page.locator("#q-state").inner_text() == "open"
    shots(owner_page, "question")
    question = Node.objects.get(kind="question")
    assert is_open(question.pk)
    owner_page.goto(f"{live_server.url}/review/{topic.pk}/")
    assert "Who clears the gutter?" in owner_page.locator("#questions-near").inner_text()


def test_let_go_asks_first_then_offers_undo(owner_page, live_server, make_note, shots):
    from memory.forgetting import let_go

    old = make_note("An old thought nobody read.", days_old=20)
    let_go(old.out_edges.get().to_node_id, actor="owner")
    owner_page.goto(f"{live_server.url}/review/decays/")
    owner_page.get_by_role("link", name=f"Let #{old.pk} go now…").click()
    assert "What letting go does" in owner_page.locator("main").inner_text()
    shots(owner_page, "let-go-confirm")
    owner_page.get_by_role("button", name=f"Yes, let #{old.pk} go now").click()
    owner_page.locator("#undo-box").wait_for()
    shots(owner_page, "let-go-undo")
    old.refresh_from_db()
    assert old.decayed_at is not None
    owner_page.locator("#undo-box").get_by_role("button", name="Undo").click()
    owner_page.wait_for_load_state()
    assert "restored" in owner_page.locator(".messages").inner_text()
    old.refresh_from_db()
    assert old.decayed_at is None


def test_revoke_asks_first(owner_page, live_server, db, shots):
    from memory.tokens import create_token

    token, _ = create_token(name="scout", domains=["personal"])
    owner_page.goto(f"{live_server.url}/tokens/")
    owner_page.get_by_role("button", name="Revoke").click()
    assert "What revoking does" in owner_page.locator("main").inner_text()
    shots(owner_page, "revoke-confirm")
    owner_page.get_by_role("button", name="Yes, revoke scout").click()
    owner_page.wait_for_url(f"{live_server.url}/tokens/")
    token.refresh_from_db()
    assert token.revoked_at is not None
