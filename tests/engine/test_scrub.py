"""memory/scrub.py: what a body is once stored (the scrub) and its two hashes. Pure functions,
no database."""

from __future__ import annotations

import hashlib

import pytest

from memory.scrub import body_hash_of, content_key_of, scrub, scrub_report
from tests._helpers.credentials import CREDENTIALS, ORDINARY, with_secret


def test_it_normalises_line_endings_and_drops_nul():
    assert scrub("one\r\ntwo\rthree\x00four") == "one\ntwo\nthreefour"


@pytest.mark.parametrize("tag", ["think", "thinking", "system", "system-reminder", "THINK"])
def test_it_removes_each_scaffold_block_across_lines_and_attributes(tag):
    raw = f'Ana moves in June.<{tag} role="x">line one\nline two</{tag} > She packs.'
    assert scrub(raw) == "Ana moves in June. She packs."


def test_it_removes_each_block_alone_not_the_claim_between_two():
    assert scrub("<think>a</think>Keep this.<think>b</think>") == "Keep this."


def test_it_leaves_a_tag_that_is_only_mentioned():
    assert scrub("Use the `<think>` tag in prompts") == "Use the `<think>` tag in prompts"
    assert scrub("<system-reminder>Half open. </Thinking>Closed.") == (
        "<system-reminder>Half open. </Thinking>Closed."
    )


def test_it_leaves_a_block_written_as_code():
    raw = "Wrap it: `<think>plan</think>` or\n```\n<system>rules</system>\n```\n<think>x</think>"
    assert scrub(raw) == "Wrap it: `<think>plan</think>` or\n```\n<system>rules</system>\n```"


def test_it_counts_what_it_stripped_by_tag():
    report = scrub_report("<think>a</think>One.<system-reminder>b</system-reminder><|im_end|>")
    assert report.stripped == {"think": 1, "system-reminder": 1, "template-token": 1}


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


@pytest.mark.parametrize(("kind", "template", "secret"), CREDENTIALS)
def test_it_replaces_each_credential_shape_by_its_label(kind, template, secret):
    report = scrub_report(with_secret(template, secret))
    assert report.text == with_secret(template, f"[redacted: {kind}]")
    assert report.redacted == {kind: 1}


@pytest.mark.parametrize("words", ORDINARY)
def test_it_keeps_hashes_uuids_commit_ids_and_words_about_secrets(words):
    report = scrub_report(words)
    assert (report.text, report.redacted) == (words, {})


def test_it_counts_several_secrets_of_one_kind():
    report = scrub_report("AKIAIOSFODNN7EXAMPLE then AKIAI44QH8DHBEXAMPLE")
    assert report.text == "[redacted: aws-access-key] then [redacted: aws-access-key]"
    assert report.redacted == {"aws-access-key": 2}
