"""The overview's line on watching and the sleep page's watched folders."""

from __future__ import annotations

import json

from memory.importers import watch


def _scan(tmp_path, settings):
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    line = {"type": "user", "uuid": "u1", "message": {"content": "Bleed the radiators."}}
    (folder / "s.jsonl").write_text(json.dumps(line) + "\n{broken\n")
    settings.GROVE_WATCH = f"claude-code@work:{tmp_path / 'projects'},codex:{tmp_path}/<gone>"
    return watch.scan()


def test_the_overview_says_when_the_last_scan_ran_and_what_it_brought(
    owner_client, tmp_path, settings
):
    _scan(tmp_path, settings)
    page = owner_client.get("/").content.decode()
    assert "1 file changed of 1, 1 new turn, 2 problems." in page


def test_the_overview_says_when_nothing_is_watched(owner_client, settings):
    settings.GROVE_WATCH = ""
    assert "No agents' session folders watched" in owner_client.get("/").content.decode()


def test_the_sleep_page_lists_the_watched_folders_and_the_last_scans(
    owner_client, tmp_path, settings
):
    scan = _scan(tmp_path, settings)
    page = owner_client.get("/sleep/").content.decode()
    assert f"<code>{tmp_path / 'projects'}</code>" in page and "work" in page
    assert f'<code>{tmp_path}/&lt;gone&gt;</code> <span class="tag">missing</span>' in page
    assert f'id="scan-{scan.pk}"' in page
    assert "s.jsonl line 2: not JSON" in page
    assert "Bleed the radiators" not in page  # cursors and scans only: no words


def test_the_sleep_page_says_when_the_setting_cannot_be_read(owner_client, settings):
    settings.GROVE_WATCH = "gemini:/tmp"
    page = owner_client.get("/sleep/").content.decode()
    assert '<p class="error-box" role="alert">GROVE_WATCH cannot be read' in page
