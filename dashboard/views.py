"""The overview page, and the feed of what waits for the owner."""

from __future__ import annotations

import hmac

from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import feedgenerator, timezone
from django.utils.crypto import salted_hmac
from django.views.decorators.http import require_GET

from dashboard.agent_activity import last_looked, since
from dashboard.auditlog import sealed_ids
from dashboard.charts import daily_bars
from dashboard.overview import (
    PENDING_CAP,
    chart_days_label,
    daily_activity,
    last_runs,
    latest_events,
    lifecycle_counts,
    next_sleep,
    pending_decay_counts,
)
from memory.custody.chain_verify import last_checkpoint
from memory.custody.drift import last_found
from memory.models import SleepRun, SleepStatus
from memory.trust import trust_counts
from review.queue import held_back_words, waiting

FEED_ITEMS = 50


def feed_key() -> str:
    """The secret part of the feed's URL: derived from the secret key (so it survives restarts
    and changes with the key), never stored or logged."""
    return salted_hmac("grove.waiting-feed", "waiting", algorithm="sha256").hexdigest()[:32]


def integrity_state() -> dict[str, object]:
    """The chain's last verified point and what the last finished sleep's integrity step
    found (a count of violations by check), for the overview's first lines."""
    run = (
        SleepRun.objects.filter(status=SleepStatus.DONE, steps__has_key="integrity")
        .order_by("-id")
        .first()
    )
    step = (run.steps or {}).get("integrity", {}) if run else {}
    return {
        "checkpoint": last_checkpoint(),
        "run": run,
        "violations": step.get("count", 0) if isinstance(step, dict) else 0,
        "failed": sorted((step.get("failed") or {}).keys()) if isinstance(step, dict) else [],
    }


@require_GET
def overview(request: HttpRequest) -> HttpResponse:
    counts = lifecycle_counts()
    trusts = trust_counts(total=counts["total"])
    activity = daily_activity()
    label = chart_days_label(activity["days"])
    chart = daily_bars(
        days=activity["days"],
        series=[
            ("arrived", "#2f6b4f", activity["arrived"]),
            ("decayed", "#a0522d", activity["decayed"]),
        ],
        title=f"Nodes arrived and decayed per day, {label} (UTC)",
    )
    events = latest_events()
    now = timezone.now()
    mark = last_looked(request.session, now=now)
    context = {
        "since": since(mark, now=now),
        "feed_key": feed_key(),
        "integrity": integrity_state(),
        "counts": counts,
        "trusts": trusts,
        "chart": chart,
        "schedule": next_sleep(),
        "runs": last_runs(),
        "events": events,
        "sealed_ids": sealed_ids(e.node_id for e in events),
        "held": held_back_words(),
        "drift_count": len(last_found()),
    }
    return render(request, "dashboard/overview.html", context)


@require_GET
def overview_waiting(request: HttpRequest) -> HttpResponse:
    """How many nodes the decay sweep collects now, as the overview's queue link (its own
    request: the mark walks every live holding edge)."""
    at_next_sleep, week = pending_decay_counts()
    context = {
        "pending_decays": at_next_sleep,
        "pending_cap": PENDING_CAP,
        "goes_this_week": week,
    }
    return render(request, "dashboard/overview.html#waiting", context)


@login_not_required
@require_GET
def waiting_feed(request: HttpRequest, key: str) -> HttpResponse:
    """An Atom feed of what waits for the owner, for any feed reader, behind its own secret
    URL (the reader holds no session). A wrong key is a 404, compared in constant time.
    Entries name each waiting proposal by id, agent, kind and domain, never its words: a feed
    leaves the machine for whatever reader the owner uses."""
    if not hmac.compare_digest(key.encode(), feed_key().encode()):
        raise Http404("no such feed")
    queue = waiting()
    held = held_back_words()
    base = request.build_absolute_uri("/")
    feed = feedgenerator.Atom1Feed(
        title="Grove: what waits for you",
        link=request.build_absolute_uri(reverse("review_queue")),
        description="Proposals waiting for review, and decays sleep held back.",
        feed_url=request.build_absolute_uri(),
    )
    muted = sum(queue.muted.values())
    oldest = queue.items[0].proposal if queue.items else None
    feed.add_item(
        title=f"{len(queue.items)} proposal{'s' if len(queue.items) != 1 else ''} waiting"
        + (f", {muted} aside from muted agents" if muted else ""),
        link=request.build_absolute_uri(reverse("review_queue")),
        description=(
            f"The oldest has waited since {oldest.at:%Y-%m-%d %H:%M} UTC." if oldest else "None."
        ),
        unique_id=f"{base}#waiting-{len(queue.items)}-{oldest.pk if oldest else 0}",
        updateddate=oldest.at if oldest else timezone.now(),
    )
    if held:
        feed.add_item(
            title=f"Sleep held back {held['count']} decays ({held['percent']}% of live)",
            link=request.build_absolute_uri(reverse("pending_decays")),
            description="Review them on the pending decays page.",
            unique_id=f"{base}#held-{held['run']}",
            updateddate=timezone.now(),
        )
    for item in queue.items[-FEED_ITEMS:][::-1]:
        proposal = item.proposal
        assert proposal is not None  # every waiting item has its proposal
        link = request.build_absolute_uri(reverse("review_node", args=[item.node.pk]))
        feed.add_item(
            title=f"Proposal #{item.node.pk} from {proposal.actor}",
            link=link,
            description=f"A {item.node.kind} in {item.node.domain}, proposed for rooting.",
            unique_id=f"{link}#proposal-{proposal.pk}",
            updateddate=proposal.at,
            pubdate=proposal.at,
        )
    response = HttpResponse(content_type="application/atom+xml; charset=utf-8")
    feed.write(response, "utf-8")
    response["Cache-Control"] = "no-store"
    return response
