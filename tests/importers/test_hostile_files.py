"""Hostile files for the importers: links out of the root, bad files among good ones, files too
large to read, and summaries that speak sentences (issue 12, findings 9 and 10)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from memory.errors import Invalid
from memory.importers.locomo import ingest as ingest_locomo
from memory.importers.markdown import ingest as ingest_vault
from memory.importers.transcript import ingest as ingest_transcript
from memory.models import Node

CHAT = [{"role": "user", "content": "The boiler is serviced in March."}]


@pytest.fixture
def secret(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "hostname.md"
    path.write_text("# Host\n\nsecret-host-name\n")
    return path


def test_the_vault_refuses_a_symlink_out_of_the_vault(db, tmp_path, secret):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("# Note\n\nA real note.\n")
    (vault / "x.md").symlink_to(secret)
    summary = ingest_vault(vault)
    assert Node.objects.filter(body__contains="A real note").exists()
    assert not Node.objects.filter(body__contains="secret-host-name").exists()
    assert summary.files_failed == 1 and "x.md: a link to" in str(summary)


def test_the_vault_follows_a_symlink_that_stays_inside(db, tmp_path):
    vault = tmp_path / "vault"
    (vault / "real").mkdir(parents=True)
    (vault / "real" / "note.md").write_text("# Note\n\nReached through a link.\n")
    (vault / "alias.md").symlink_to(vault / "real" / "note.md")
    assert ingest_vault(vault).files_failed == 0


def test_the_transcript_folder_refuses_a_symlink_out_of_the_folder(db, tmp_path):
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps([{"role": "user", "content": "secret words"}]))
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "a.json").symlink_to(outside)
    summary = ingest_transcript(folder)
    assert not Node.objects.filter(body__contains="secret words").exists()
    assert summary.files_failed == 1 and "refused_file" in str(summary)


@pytest.mark.parametrize(
    "bad",
    [
        '[{"role": "user", "content": "lone \\ud800 surrogate"}]',
        '[{"role": "user", "content": "x", "n": ' + "9" * 5000 + "}]",
        "[" * 100_000,
        b"\xff\xfe not utf-8",
    ],
)
def test_one_bad_transcript_does_not_stop_the_folder(db, tmp_path, bad):
    folder = tmp_path / "chats"
    folder.mkdir()
    path = folder / "a-bad.json"
    path.write_bytes(bad if isinstance(bad, bytes) else bad.encode())
    (folder / "b-good.json").write_text(json.dumps(CHAT))
    summary = ingest_transcript(folder)
    assert (summary.files_new, summary.files_failed) == (1, 1)
    assert "a-bad.json: bad_" in str(summary)
    assert Node.objects.filter(body="The boiler is serviced in March.").exists()


def test_a_file_over_the_limit_is_refused_unread(db, tmp_path, settings):
    folder = tmp_path / "chats"
    folder.mkdir()
    with (folder / "huge.jsonl").open("wb") as handle:
        handle.truncate(8 * 2**30)  # 8 GiB, sparse: reading it whole would not end well
    (folder / "small.json").write_text(json.dumps(CHAT))
    summary = ingest_transcript(folder)
    assert summary.files_new == 1 and "over the import limit" in str(summary)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "big.md").write_text("# Big\n\n" + "words " * 100)
    settings.GROVE_MAX_IMPORT_BYTES = 100
    assert "over the import limit" in str(ingest_vault(vault))


def test_locomo_refuses_a_file_over_the_limit(db, tmp_path, settings):
    path = tmp_path / "locomo.json"
    path.write_text("[]" + " " * 200)
    settings.GROVE_MAX_IMPORT_BYTES = 100
    with pytest.raises(Invalid, match="over the import limit"):
        ingest_locomo(path, tz="UTC")


def test_the_ingest_command_speaks_sentences(db, tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([]))
    out = StringIO()
    call_command("ingest", str(path), "--format", "locomo", "--tz", "UTC", stdout=out)
    assert "IngestSummary(" not in out.getvalue()
    assert out.getvalue().startswith(f"Imported {path} as locomo: 0 samples imported")
