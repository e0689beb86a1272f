"""memory/scrub.py: what a body is once stored (the scrub) and its two hashes. Pure functions,
no database."""

from __future__ import annotations

import hashlib

import pytest

from memory.scrub import body_hash_of, content_key_of, scrub


def test_it_normalises_line_endings_and_drops_nul():
    assert scrub("one\r\ntwo\rthree\x00four") == "one\ntwo\nthreefour"


@pytest.mark.parametrize("tag", ["think", "thinking", "system", "system-reminder", "THINK"])
def test_it_removes_each_scaffold_block_across_lines_and_attributes(tag):
    raw = f'Ana moves in June.<{tag} role="x">line one\nline two</{tag} > She packs.'
    assert scrub(raw) == "Ana moves in June. She packs."


def test_it_removes_each_block_alone_not_the_claim_between_two():
    assert scrub("<think>a</think>Keep this.<think>b</think>") == "Keep this."


def test_it_removes_stray_tags_and_keeps_their_words():
    assert scrub("<system-reminder>Half open. </Thinking>Closed.") == "Half open. Closed."


def test_it_keeps_tags_that_only_begin_like_scaffolding():
    assert scrub("A <thinker> and <systems> note.") == "A <thinker> and <systems> note."


@pytest.mark.parametrize("token", ["<|im_start|>", "<|IM_END|>", "<|endoftext|>", "<|eot_id|>"])
def test_it_removes_chat_template_tokens(token):
    assert scrub(f"Before {token}after") == "Before after"


def test_it_removes_the_role_only_right_after_im_start():
    assert scrub("<|im_start|>assistant The user said yes.<|im_end|>user") == (
        "The user said yes.user"
    )
    assert scrub("<|im_start|>users are here") == "users are here"


def test_body_hash_is_the_sha256_of_the_utf8_body():
    assert body_hash_of("café ☕") == hashlib.sha256("café ☕".encode()).hexdigest()


def test_content_key_folds_to_one_spaced_casefolded_text():
    assert content_key_of("  Straße\u200b \t IST\n offen ") == (
        hashlib.sha256(b"strasse ist offen").hexdigest()
    )


def test_content_key_applies_nfkc():
    assert content_key_of("\ufb01ne") == content_key_of("fine")  # the fi ligature
