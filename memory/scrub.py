"""What a body is once stored: scrubbed of transport scaffolding, and its two hashes (the
body_hash custody checks, the content key the tombstone and the duplicate lookup use).

The write path (memory/write.py) applies them; drift and the ceremonies re-derive them.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

# Transport scaffolding: model reasoning and system blocks, chat-template tokens. Never the claim.
_SCAFFOLD_BLOCKS = re.compile(
    r"<(think|thinking|system|system-reminder)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)
_SCAFFOLD_TAGS = re.compile(
    r"</?(think|thinking|system|system-reminder)\b[^>]*>|<\|(im_start|im_end|endoftext|eot_id)\|>"
    r"(?:(?<=im_start\|>)(system|user|assistant)\b)?",
    re.IGNORECASE,
)
_WS = re.compile(r"\s+")


def scrub(text: str) -> str:
    """Strip transport scaffolding (<think>/<system> blocks, stray tags, template tokens) and
    normalise line endings. Never rewrites the words of the claim itself."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = _SCAFFOLD_BLOCKS.sub("", text)
    text = _SCAFFOLD_TAGS.sub("", text)
    return text.strip()


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
