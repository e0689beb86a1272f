"""The timed scan of the watched folders (memory/importers/watch.py), in-process."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django_q.models import Schedule

from memory.errors import Invalid
from memory.importers import watch
from memory.models import Node


def _session(folder, name="s.jsonl", words="The gutter leaks at the back."):
    folder.mkdir(parents=True, exist_ok=True)
    line = {
        "type": "user",
        "uuid": f"u-{name}",
        "cwd": "/home/ada/house",
        "message": {"content": words},
    }
    path = folder / name
    path.write_text(json.dumps(line) + "\n")
    return path


def test_the_setting_names_format_and_folder_and_refuses_an_unknown_format(settings, tmp_path):
    settings.GROVE_WATCH = f"claude-code:{tmp_path}, codex:~/.codex/sessions"
    assert str(watch.folders()[0]) == f"claude-code:{tmp_path}"
    assert watch.folders()[1].path.is_absolute()
    with pytest.raises(Invalid, match=r"FORMAT\[@DOMAIN\]:FOLDER"):
        watch.folders("gemini:/tmp")


def test_a_scan_imports_what_changed_and_passes_over_what_did_not(db, tmp_path):
    _session(tmp_path / "p")
    watched = watch.folders(f"claude-code:{tmp_path}")
    first = watch.scan(watched=watched)
    second = watch.scan(watched=watched)
    assert (first.files_seen, first.files_changed, first.turns_new) == (1, 1, 1)
    assert (second.files_seen, second.files_changed, second.turns_new) == (1, 0, 0)
    assert Node.objects.get(kind="utterance").domain == "house"


def test_a_missing_folder_is_named_in_the_scan_and_the_others_go_on(db, tmp_path):
    _session(tmp_path / "p")
    scan = watch.scan(watched=watch.folders(f"codex:{tmp_path}/gone,claude-code:{tmp_path}"))
    assert scan.errors == [f"codex:{tmp_path}/gone: no such folder"]
    assert scan.turns_new == 1


def test_watch_once_says_what_came(db, tmp_path, settings):
    _session(tmp_path / "p")
    settings.GROVE_WATCH = f"claude-code:{tmp_path}"
    out = StringIO()
    call_command("watch", "--once", stdout=out)
    assert out.getvalue().startswith("scanned 1 files: 1 changed, 1 new turns")


def test_the_schedule_follows_the_setting_and_goes_when_nothing_is_watched(db, settings, tmp_path):
    settings.GROVE_WATCH, settings.GROVE_WATCH_SECONDS = f"codex:{tmp_path}", 300
    call_command("watch", "--install-schedule", stdout=StringIO())
    schedule = Schedule.objects.get(name=watch.SCHEDULE_NAME)
    assert (schedule.func, schedule.minutes) == ("memory.tasks.scheduled_watch", 5)
    settings.GROVE_WATCH = ""
    call_command("watch", "--install-schedule", stdout=StringIO())
    assert not Schedule.objects.filter(name=watch.SCHEDULE_NAME).exists()


def test_a_watched_folder_may_name_the_domain_its_sessions_go_to(db, tmp_path):
    _session(tmp_path / "p")
    watch.scan(watched=watch.folders(f"claude-code@work:{tmp_path}"))
    assert set(Node.objects.values_list("domain", flat=True)) == {"work"}
