"""Reason codes in words: the one mapping from the codes events carry to what a person reads.

Codes are stable identifiers in the audit log (and its exports); pages show the words. A reason
that is not a code (an agent's or the owner's own text) is shown as it was written.
"""

from __future__ import annotations

REASON_WORDS: dict[str, str] = {
    # Why a node decayed (DecayReason).
    "age_no_access": "nobody read it and nothing live held it",
    "cascade": "everything it came from had decayed",
    "consolidated": "folded into a synthesis",
    "owner_let_go": "you let it go",
    "unreachable": "nothing alive holds it",
    # What brought a forgotten node back.
    "dug_and_read": "an agent dug it up and read it",
    "held_by_dug": "a node an agent dug up and read holds it",
    "held_by_restore": "a node you restored holds it",
    # The owner's other lifecycle acts.
    "owner_restore": "you restored it",
    "owner_keep": "you kept it",
    "owner_wrote": "you wrote it on the dashboard",
    "owner_release": "you released what sleep held back",
    # Sleep and the write path.
    "reads": "read often enough to become permanent",
    "rearrival": "the same content arrived again",
    "tombstoned": "it was rejected, so its content is a tombstone",
}


def reason_words(code: str | None) -> str:
    """The words for a reason code; any other text unchanged; "" for no reason."""
    if not code:
        return ""
    return REASON_WORDS.get(code, code)
