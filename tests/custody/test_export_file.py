"""The export file holds every sealed body, so only its owner may read it (manage.py export)."""

from __future__ import annotations

import os
import stat
from io import StringIO

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db(transaction=True)


def test_export_creates_its_file_readable_by_the_owner_alone(tmp_path):
    old = os.umask(0)  # a permissive umask: the mode must come from the creation itself
    try:
        call_command("export", str(tmp_path / "m.jsonl"), stdout=StringIO())
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "m.jsonl").stat().st_mode) == 0o600


def test_export_says_the_mode_and_warns_of_sealed_words(tmp_path):
    out = StringIO()
    call_command("export", str(tmp_path / "m.jsonl"), stdout=out)
    assert "mode 0600" in out.getvalue()
    assert "sealed" in out.getvalue()


def test_export_still_refuses_to_overwrite_a_file(tmp_path):
    (tmp_path / "m.jsonl").write_text("kept", encoding="utf-8")
    with pytest.raises(FileExistsError):
        call_command("export", str(tmp_path / "m.jsonl"), stdout=StringIO())
    assert (tmp_path / "m.jsonl").read_text(encoding="utf-8") == "kept"
