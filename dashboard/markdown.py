"""Bodies as safe HTML: CommonMark with raw HTML off (markdown-it-py), then nh3 sanitising.

Two layers on purpose: with html off the parser escapes any tag a body holds, and nh3 (ammonia)
then drops whatever the renderer could still emit that we do not allow (a javascript: URL in a
link, an image pointing off the machine). [[wikilinks]] become links: [[42]] or [[#42]] to that
node's page, anything else to a search for its words. This is the one place bodies turn into
HTML; templates use the `markdown` filter, never |safe on a body.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import nh3
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

_NODE_REF = re.compile(r"#?(\d{1,18})")
MAX_WIKILINK = 200
TAGS = {
    "p", "br", "hr", "em", "strong", "del", "code", "pre", "blockquote", "ul", "ol", "li",
    "a", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
# Images are left out: an <img> pointing elsewhere would make a page load fetch from the
# network (and tell someone the owner is reading).
ATTRIBUTES = {"a": {"href", "title", "class"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}


def wikilink_href(target: str) -> str:
    """Where [[target]] points: a node page for a node id, else a search over both scopes."""
    if match := _NODE_REF.fullmatch(target.strip()):
        return reverse("node", args=[int(match.group(1))])
    return reverse("search") + "?" + urlencode({"q": target.strip(), "scope": "both"})


def _wikilink(state: StateInline, silent: bool) -> bool:
    src, start = state.src, state.pos
    if not src.startswith("[[", start):
        return False
    end = src.find("]]", start + 2)
    target = src[start + 2 : end] if end != -1 else ""
    if not target.strip() or len(target) > MAX_WIKILINK or "\n" in target or "[" in target:
        return False
    if not silent:
        label = target.split("|", 1)[-1].strip() or target
        link = state.push("link_open", "a", 1)
        link.attrs = {"href": wikilink_href(target.split("|", 1)[0]), "class": "wikilink"}
        text = state.push("text", "", 0)
        text.content = label
        state.push("link_close", "a", -1)
    state.pos = end + 2
    return True


_md = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
_md.inline.ruler.before("link", "wikilink", _wikilink)


def render_markdown(body: str) -> SafeString:
    """A body as sanitised HTML (see the module docstring for the two layers)."""
    html = _md.render(body or "")
    clean = nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)  # sanitised by nh3 just above
