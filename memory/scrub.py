"""What a body is once stored: scrubbed of transport scaffolding, credentials replaced by a
label, and its two hashes (the body_hash custody checks, the content key the tombstone and the
duplicate lookup use).

The write path (memory/write.py) applies them; drift and the ceremonies re-derive them, so the
hashes are always of the redacted text: the secret is never hashed, stored or indexed.

Credentials are found by Yelp's detect-secrets plugins (their regexes, run over the whole text
rather than line by line: one pass per pattern, and a PEM block spans lines), plus the shapes
that library does not know yet (fine-grained GitHub tokens, Anthropic, newer OpenAI project
keys, Google API keys, bare npm tokens) and random-looking values in obvious places: bearer and
basic authorization headers, upper-case `*_SECRET=`/`*_TOKEN=` assignments. Its entropy plugins
are left out: they flag any quoted hex or base64, which is what a sha256 or a commit id the owner
wrote on purpose looks like.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.ip_public import IPPublicDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector

# Transport scaffolding: model reasoning and system blocks, chat-template tokens. Never the claim.
_SCAFFOLD_BLOCKS = re.compile(
    r"<(think|thinking|system|system-reminder)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)
_TEMPLATE_TOKENS = re.compile(
    r"<\|(?:im_start|im_end|endoftext|eot_id)\|>(?:(?<=im_start\|>)(?:system|user|assistant)\b)?",
    re.IGNORECASE,
)
# Code spans and fences are where a tag is mentioned, not used: never stripped inside them.
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.DOTALL)
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Scrubbed:
    """A body as stored, with what the scrub took out: scaffolding stripped (by tag) and
    credentials redacted (by kind). Counts only: never the secret."""

    text: str
    stripped: dict[str, int] = field(default_factory=dict)
    redacted: dict[str, int] = field(default_factory=dict)


def scrub(text: str) -> str:
    """The stored form of a body (scrub_report's text)."""
    return scrub_report(text).text


def scrub_report(text: str) -> Scrubbed:
    """Normalise line endings, strip scaffolding blocks (<think>/<system> ... and chat-template
    tokens) outside code spans, and replace credentials by `[redacted: kind]`. A tag that is only
    mentioned ("use the `<think>` tag", a lone `<system>`) stays: only whole blocks go."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    stripped: Counter[str] = Counter()

    def strip(part: str) -> str:
        def block(match: re.Match[str]) -> str:
            stripped[match.group(1).lower()] += 1
            return ""

        def token(match: re.Match[str]) -> str:
            stripped["template-token"] += 1
            return ""

        return _TEMPLATE_TOKENS.sub(token, _SCAFFOLD_BLOCKS.sub(block, part))

    pieces, last = [], 0
    for code in _CODE.finditer(text):
        pieces += [strip(text[last : code.start()]), code.group()]
        last = code.end()
    pieces.append(strip(text[last:]))
    clean, redacted = redact("".join(pieces).strip())
    return Scrubbed(clean, dict(stripped), redacted)


# --- credentials -------------------------------------------------------------------------------

LABEL = "[redacted: {}]"
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-]*")
_JWT_TAIL = re.compile(r"[A-Za-z0-9_\-=+/.]*")
_EDGE = " \t\n=:\"'"
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*-----|\Z")
_KINDS = {
    "AWS Access Key": "aws-access-key",
    "Basic Auth Credentials": "url-password",
    "JSON Web Token": "jwt",
    "NPM tokens": "npm-token",
    "OpenAI Token": "openai-key",
    "Private Key": "private-key",
}
# Not secrets, or matched better by the checks below (whole header, whole block, validity).
_NOT_BY_REGEX = (IPPublicDetector, PrivateKeyDetector, JwtTokenDetector, AWSKeyDetector)


def _random(value: str) -> bool:
    """A credential-like value: long, of mixed character classes, high in entropy (so the
    words "Bearer authentication" or "TOKEN=placeholder" stay)."""
    if len(value) < 16:
        return False
    classes = sum(any(test(ch) for ch in value) for test in (str.islower, str.isupper, str.isdigit))
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return classes >= 2 and entropy >= 3.5


@dataclass(frozen=True)
class _Shape:
    kind: str
    pattern: re.Pattern[str]
    group: int = 0  # the group that is the secret (0: the whole match)
    tail: re.Pattern[str] | None = _TOKEN_TAIL  # the rest of the token a prefix match cut short
    check: Callable[[str], bool] | None = None  # a test the secret must pass


def _library_shapes() -> list[_Shape]:
    """detect-secrets' regex plugins, each pattern as a shape: where a pattern captures the
    secret (a URL's password, a keyword's value) that group is redacted, else the whole match
    (a captured prefix such as GitHub's "ghp" is not the secret)."""
    shapes: list[_Shape] = []
    plugins: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()
    for secret_type, plugin in plugins.items():
        if not issubclass(plugin, RegexBasedDetector) or issubclass(plugin, _NOT_BY_REGEX):
            continue
        kind = _KINDS.get(secret_type) or _slug(secret_type)
        prefix_only = plugin in (GitHubTokenDetector, GitLabTokenDetector)
        # A class attribute on each plugin, though the base class declares it a property.
        denylist: list[re.Pattern[str]] = cast(Any, plugin).denylist
        for pattern in denylist:
            group = 1 if pattern.groups and not prefix_only else 0
            shapes.append(_Shape(kind, pattern, group, None if group else _TOKEN_TAIL))
    return shapes


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


_SHAPES: list[_Shape] = [
    # A PEM block from its header to its footer (the library finds the header line only).
    _Shape(
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|"
            r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----|PuTTY-User-Key-File-2"
        ),
        tail=None,
    ),
    _Shape("aws-access-key", AWSKeyDetector.denylist[0]),
    _Shape("aws-secret-key", AWSKeyDetector.denylist[1], group=1, tail=None),
    _Shape(
        "aws-secret-key",
        re.compile(r"\bAWS_SECRET_ACCESS_KEY\s*[=:]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"),
        group=1,
        tail=None,
    ),
    _Shape("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}")),
    _Shape("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"), check=_random),
    _Shape(
        "openai-key",
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        check=_random,
    ),
    _Shape("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    _Shape("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}")),
    _Shape(
        "jwt",
        JwtTokenDetector.denylist[0],
        tail=_JWT_TAIL,
        check=JwtTokenDetector.is_formally_valid,
    ),
    *_library_shapes(),
    _Shape(
        "bearer-token",
        re.compile(r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9\-._~+/]{16,}=*)"),
        group=1,
        tail=None,
        check=_random,
    ),
    _Shape(
        "basic-auth",
        re.compile(r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/]{12,}=*)"),
        group=1,
        tail=None,
    ),
    _Shape(
        "secret-assignment",
        re.compile(
            r"\b[A-Z][A-Z0-9_]*(?:SECRET|PASSWORD|PASSWD|TOKEN|API_?KEY|ACCESS_KEY|AUTH)"
            r"[A-Z0-9_]*\s*[=:]\s*[\"']?([^\s\"']{8,})"
        ),
        group=1,
        tail=None,
        check=_random,
    ),
]
_KEYWORD = KeywordDetector()
_KEYWORD_HINT = re.compile(r"(?i)pass|pwd|secret|key|token|auth|cred")


def _spans(text: str) -> list[tuple[int, int, str]]:
    """Every credential's (start, end, kind), overlaps resolved to the earliest, longest."""
    found: list[tuple[int, int, str]] = []
    for shape in _SHAPES:
        for match in shape.pattern.finditer(text):
            start, end = match.span(shape.group)
            if start < 0 or end <= start:
                continue
            if shape.kind == "private-key":
                end = _PEM_END.search(text, end).end()  # type: ignore[union-attr]  # \Z matches
            elif shape.tail is not None:
                end = shape.tail.match(text, end).end()  # type: ignore[union-attr]  # * matches
            # Some library patterns take the space or quote around the token into the match.
            while start < end and text[start] in _EDGE:
                start += 1
            secret = text[start:end].rstrip(_EDGE + ".")
            if shape.check is not None and not shape.check(secret):
                continue
            found.append((start, start + len(secret), shape.kind))
    if _KEYWORD_HINT.search(text):
        found += _keyword_spans(text)
    spans: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(found, key=lambda s: (s[0], -s[1])):
        if spans and start < spans[-1][1]:
            if end > spans[-1][1]:
                spans[-1] = (spans[-1][0], end, spans[-1][2])
            continue
        spans.append((start, end, kind))
    return spans


def _keyword_spans(text: str) -> list[tuple[int, int, str]]:
    """detect-secrets' keyword plugin (`password = "..."`, `"api_key": "..."`), line by line as
    it reads; the value it reports is located in its line."""
    spans, offset = [], 0
    for number, line in enumerate(text.split("\n"), start=1):
        if _KEYWORD_HINT.search(line):
            for secret in _KEYWORD.analyze_line(filename="body.txt", line=line, line_number=number):
                value = secret.secret_value or ""
                if len(value) >= 6 and (at := line.find(value)) >= 0:
                    spans.append((offset + at, offset + at + len(value), "password"))
        offset += len(line) + 1
    return spans


def redact(text: str) -> tuple[str, dict[str, int]]:
    """The text with each credential replaced by `[redacted: kind]`, and how many of each kind
    (never the secret)."""
    spans = _spans(text)
    if not spans:
        return text, {}
    pieces, last = [], 0
    for start, end, kind in spans:
        pieces += [text[last:start], LABEL.format(kind)]
        last = end
    pieces.append(text[last:])
    return "".join(pieces), dict(Counter(kind for _, _, kind in spans))


def body_hash_of(body: str) -> str:
    """sha256 hex of the stored (already scrubbed) body."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def content_key_of(body: str) -> str:
    """The tombstone key: sha256 of NFKC, casefolded, whitespace-folded text without format
    characters (Unicode Cf: zero-width, bidi controls, tags, soft hyphen), so an invisible
    character cannot slip rejected words past their tombstone."""
    visible = "".join(
        ch for ch in unicodedata.normalize("NFKC", body) if unicodedata.category(ch) != "Cf"
    )
    folded = _WS.sub(" ", visible.casefold()).strip()
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()
