"""Tokens, sleep, bodies, reasons, the chart, the graph's layout and the error pages."""

from __future__ import annotations

import itertools
from datetime import date, timedelta

import pytest
from django.template.loader import render_to_string

from dashboard.charts import bar_geometry, daily_bars
from dashboard.graph import backlinks, neighbourhood
from dashboard.graph_layout import layout
from dashboard.markdown import render_markdown
from memory.audit import reason_words
from memory.models import ApiToken, SleepRun
from memory.scroll import commit_turn, scroll_dir
from memory.tokens import hash_secret
from review.ceremony import seal


def _child(make_note, parent, body, **fields):
    return make_note(body, origins=[{"id": parent.pk, "relation": "derived_from"}], **fields)


def test_a_token_minted_on_the_page_shows_its_secret_once(owner_client):
    response = owner_client.post("/tokens/new/", {"name": "scout", "domains": "personal work"})
    secret = response.context["secret"]
    assert secret in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    assert ApiToken.objects.get(name="scout").token_hash == hash_secret(secret)
    assert secret not in owner_client.get("/tokens/").content.decode()


@pytest.mark.parametrize(
    "form", [{"name": "bad name!", "domains": "x"}, {"name": "ok", "domains": ""}]
)
def test_a_refused_token_form_stores_nothing_and_says_why(owner_client, form):
    response = owner_client.post("/tokens/new/", form)
    assert response.status_code == 400
    assert 'id="create-error"' in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_double_post_of_run_sleep_now_queues_one_run(owner_client):
    owner_client.post("/sleep/run/")
    owner_client.post("/sleep/run/")
    assert SleepRun.objects.count() == 1


def test_run_sleep_now_is_disabled_and_the_page_refreshes_only_while_a_run_is_going(owner_client):
    idle = owner_client.get("/sleep/").content.decode()
    assert 'http-equiv="refresh"' not in idle and "refreshes by itself" not in idle
    assert 'id="run-sleep-now">' in idle
    SleepRun.objects.create(status="queued", requested_by="owner")
    busy = owner_client.get("/sleep/").content.decode()
    assert '<noscript><meta http-equiv="refresh"' in busy
    assert 'id="run-sleep-now" disabled' in busy


def test_the_sleep_page_verifies_scrolls_on_request(owner_client, settings, tmp_path):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    commit_turn(conversation="kitchen", user="I owe Ana 20 euros", assistant="Noted.")
    assert "not checked" in owner_client.get("/sleep/").content.decode()
    assert "intact" in owner_client.get("/sleep/?verify=scrolls").content.decode()
    path = scroll_dir() / "kitchen.jsonl"
    path.write_text(path.read_text().replace("20 euros", "2 euros"))
    broken = owner_client.get("/sleep/?verify=scrolls").content.decode()
    assert "broken" in broken and "does not match its hash" in broken


def test_bodies_render_as_sanitised_markdown():
    html = render_markdown(
        "# Plan\n<script>alert(1)</script> **bold** [x](javascript:alert(1)) "
        '<img src=x onerror="y"> ![p](http://tracker.example/p.png)'
    )
    assert "<h1>Plan</h1>" in html and "<strong>bold</strong>" in html
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;" in html


def test_wikilinks_go_to_a_node_or_to_search():
    html = render_markdown("See [[#12]], [[Kitchen plan]] and [[tiles|the tiles]].")
    assert 'href="/node/12/"' in html
    assert 'href="/search/?q=Kitchen+plan&amp;scope=both"' in html
    assert ">the tiles</a>" in html and 'href="/search/?q=tiles&amp;scope=both"' in html


def test_the_node_page_renders_its_body_through_the_filter(owner_client, make_note):
    node = make_note("Budget **5k**, see [[tiles]] <script>x()</script>")
    body = owner_client.get(f"/node/{node.pk}/").content.decode()
    assert "<strong>5k</strong>" in body and 'class="wikilink"' in body
    assert "<script>x()" not in body


def test_reason_codes_have_words():
    assert reason_words("age_no_access") == "nobody read it and nothing live held it"
    assert reason_words("unreachable") == "nothing alive holds it"
    assert reason_words("an agent's own words") == "an agent's own words"


def test_the_chart_draws_each_day_as_its_own_bar():
    days = [date(2026, 1, 1) + timedelta(days=i) for i in range(10)]
    arrived = [0] * 9 + [2990]
    chart = bar_geometry(
        days=days, series=[("arrived", "#000", arrived), ("decayed", "#111", [1] * 10)]
    )
    assert len(chart["bars"]) == 11  # ten decayed bars and the one day with arrivals
    xs = {b["x"] for b in chart["bars"]}
    assert len(xs) == 11  # no two bars share a slot
    assert [row[0] for row in chart["rows"]] == days
    svg = daily_bars(days=days, series=[("arrived", "#000", arrived)], title="<t>")
    assert "&lt;t&gt;" in svg and "2026-01-10: 2990 arrived" in svg


def test_a_hub_is_collapsed_to_its_top_neighbours_with_a_count(make_note):
    hub = make_note("Hub.")
    for i in range(40):
        _child(make_note, hub, f"Spoke {i}.")
    hood = neighbourhood(hub.pk, cap=12)
    drawn = layout(hood, href=lambda i: f"/node/{i}/")
    assert len([n for n in drawn["nodes"] if n["ring"] == 1]) == 12
    (pill,) = [p for p in drawn["pills"] if p["text"].startswith("+")]
    assert pill["text"] == "+29 more" and pill["href"] == f"/nodes/?near={hub.pk}"


def test_labels_never_overlap(make_note):
    hub = make_note("# A hub with a long title that goes on")
    for i in range(14):
        spoke = _child(make_note, hub, f"Spoke {i} with a fairly long first line of words")
        for j in range(3):
            _child(make_note, spoke, f"Leaf {j} of spoke {i}, also wordy")
    drawn = layout(neighbourhood(hub.pk), href=str)
    boxes = [n["label"]["box"] for n in drawn["nodes"] if n["label"]]
    assert len(boxes) > 10
    for a, b in itertools.combinations(boxes, 2):
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])


def test_nodes_carry_short_titles_and_sealed_ones_none(make_note):
    centre = make_note("Centre.")
    named = _child(make_note, centre, "x", source="vault/Garden plan.md", kind="import")
    secret = _child(make_note, centre, "Secret words here.")
    seal(secret.pk, owner="owner")
    titles = {g.id: g.title for g in neighbourhood(centre.pk).nodes.values()}
    assert titles[named.pk] == "Garden plan"
    assert titles[secret.pk] == f"sealed #{secret.pk}"


def test_backlinks_list_what_points_here(make_note):
    centre = make_note("Centre.")
    kids = [_child(make_note, centre, f"Kid {i}.") for i in range(3)]
    seal(kids[0].pk, owner="owner")
    links = backlinks(centre.pk)
    assert links["total"] == 3
    titles = {item["id"]: item["title"] for item in links["items"]}
    assert titles[kids[0].pk] == f"sealed #{kids[0].pk}" and titles[kids[1].pk] == "Kid 1."


def test_the_404_page_is_styled_and_the_favicon_is_served(owner_client):
    missing = owner_client.get("/no/such/page/")
    assert missing.status_code == 404
    assert "Nothing here" in missing.content.decode() and "grove.css" in missing.content.decode()
    assert owner_client.get("/favicon.ico")["Location"].endswith("grove/favicon.svg")


def test_the_500_page_renders_without_a_request():
    html = render_to_string("500.html")
    assert "Something broke" in html and "grove.css" in html


def test_a_decayed_node_says_why_and_restores_from_its_page(owner_client, make_note):
    from memory.forgetting import let_go
    from memory.models import Node

    gone = make_note("Old tide tables.", days_old=30)
    let_go(gone.pk, actor="owner")
    body = owner_client.get(f"/node/{gone.pk}/").content.decode()
    assert "You let it go" in body and 'id="restore-node"' in body
    back = owner_client.post(f"/node/{gone.pk}/restore/", {"next": f"/node/{gone.pk}/"})
    assert back["Location"] == f"/node/{gone.pk}/"
    assert Node.objects.get(pk=gone.pk).decayed_at is None
