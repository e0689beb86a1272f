"""Template filters for the dashboard: safe markdown bodies and reason codes in words."""

from __future__ import annotations

from django import template
from django.conf import settings
from django.utils.safestring import SafeString

from dashboard.markdown import render_markdown
from memory.audit import reason_words

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(body: str) -> SafeString:
    return render_markdown(body)


@register.filter(name="thousands")
def thousands_filter(count: int) -> str:
    """2774 as "2,774": counts of nodes read better grouped."""
    return f"{count:,}"


@register.filter(name="reason_words")
def reason_words_filter(code: str | None) -> str:
    return reason_words(code)


@register.inclusion_tag("dashboard/_watch_line.html")
def watch_line() -> dict[str, object]:
    """The overview's one line on watching: the last scan and what it brought."""
    from memory.importers import watch

    return {"scan": watch.last_scan(), "watching": bool(settings.GROVE_WATCH.strip())}
