from __future__ import annotations

import hashlib

import pytest
from django.core.management import CommandError, call_command

from memory.custody.drift import find_drift
from memory.models import Node
from memory.write import write_node
from review.ceremony import root
from tests._helpers.nodes import rooted_vault_section


@pytest.fixture
def imported(db, tmp_path):
    """A ground import whose file and recorded hash agree."""
    path = tmp_path / "recipes.md"
    path.write_text("Bread: flour, water, salt.")
    node = write_node(
        body="Bread: flour, water, salt.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source=str(path),
        metadata={"file_hash": hashlib.sha256(path.read_bytes()).hexdigest()},
    ).node
    root(node.pk, adopting_words="My recipe.", expected_body_hash=node.body_hash, owner="owner")
    return node, path


def test_no_drift_when_the_file_matches(imported, capsys):
    assert find_drift() == []
    call_command("drift")
    assert "no drift" in capsys.readouterr().out


def test_it_reports_a_changed_file_with_both_hashes(imported, capsys):
    node, path = imported
    path.write_text("Bread: flour, water, salt, yeast.")
    new_hash = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(CommandError, match="1 ground node"):
        call_command("drift")
    out = capsys.readouterr().out
    assert node.metadata["file_hash"] in out and new_hash in out


def test_it_reports_a_missing_file(imported, capsys):
    node, path = imported
    path.unlink()
    with pytest.raises(CommandError):
        call_command("drift")
    assert f"node {node.pk}: {path} is missing" in capsys.readouterr().out


def test_only_ground_counts(db, tmp_path):
    write_node(
        body="Unreviewed import.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source=str(tmp_path / "gone.md"),
        metadata={"file_hash": "0" * 64},
    )
    assert find_drift() == []


@pytest.mark.parametrize(
    ("source", "metadata"),
    [
        ("https://example.org/bread.md", {"file_hash": "0" * 64}),  # a page, not a file
        ("", {"file_hash": "0" * 64}),  # no source at all
        ("gone.md", {}),  # a file's name, but no hash was recorded
    ],
)
def test_a_ground_node_that_is_not_from_a_file_is_never_drift(
    make_note, tmp_path, source, metadata
):
    node = make_note("Bread: flour, water, salt.", source=source, metadata=metadata)
    root(node.pk, adopting_words="Mine.", expected_body_hash=node.body_hash, owner="owner")
    assert find_drift(base=tmp_path) == []


def _rooted_relative(tmp_path, on_disk: str):
    """A ground import of "A." whose source is the relative a.md, which now holds `on_disk`."""
    (tmp_path / "a.md").write_text(on_disk)
    node = write_node(
        body="A.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        source="a.md",
        metadata={"file_hash": hashlib.sha256(b"A.").hexdigest()},
    ).node
    root(node.pk, adopting_words="yes", expected_body_hash=node.body_hash, owner="owner")
    return node


def test_relative_sources_resolve_against_base(db, tmp_path):
    _rooted_relative(tmp_path, "A.")
    assert find_drift(base=tmp_path) == []
    assert [d["problem"] for d in find_drift(base=tmp_path / "elsewhere")] == ["missing"]


# --- vault sections: source file.md#slug, judged on the section's own words -----------------


@pytest.fixture
def rooted_section(db, tmp_path):
    return rooted_vault_section(tmp_path)


def test_a_rooted_section_whose_file_is_unchanged_has_no_drift(rooted_section):
    assert find_drift() == []


def test_an_edit_elsewhere_in_the_file_is_not_drift_for_the_section(rooted_section):
    _node, path = rooted_section
    path.write_text(path.read_text().replace("Roses in May.", "Roses in June."))
    assert find_drift() == []


def test_a_rooted_section_whose_words_changed_is_reported_changed(rooted_section, capsys):
    node, path = rooted_section
    path.write_text(path.read_text().replace("March", "April"))
    [item] = find_drift()
    assert (item["id"], item["problem"], item["path"]) == (node.pk, "changed", f"{path}#boiler")
    assert item["recorded"] == node.body_hash


def test_a_rooted_section_whose_heading_is_gone_is_reported_missing(rooted_section, capsys):
    node, path = rooted_section
    path.write_text("Intro line.\n\n# Garden\n\nRoses in May.\n")
    assert [(i["id"], i["problem"]) for i in find_drift()] == [(node.pk, "section missing")]
    with pytest.raises(CommandError):
        call_command("drift")
    assert f"the section {path}#boiler is gone" in capsys.readouterr().out


def test_a_rooted_section_whose_file_is_gone_is_reported_missing(rooted_section):
    node, path = rooted_section
    path.unlink()
    assert [(i["id"], i["problem"]) for i in find_drift()] == [(node.pk, "missing")]


def test_a_section_file_saved_with_windows_line_endings_has_no_drift(rooted_section):
    _node, path = rooted_section
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert b"\r\n" in path.read_bytes()
    assert find_drift() == []


def test_bytes_that_are_not_utf8_in_a_section_file_are_drift_not_a_crash(rooted_section):
    node, path = rooted_section
    path.write_bytes(path.read_bytes().replace(b"March", b"M\xe4rz"))
    assert [(i["id"], i["problem"]) for i in find_drift()] == [(node.pk, "changed")]
    path.write_bytes(path.read_bytes().replace(b"M\xe4rz", b"March").replace(b"May", b"M\xe4i"))
    assert find_drift() == []


def test_the_text_before_the_first_heading_is_a_section_drift_finds(db, tmp_path):
    node, path = rooted_vault_section(tmp_path, slug="")
    assert node.metadata["heading"] == ""
    assert find_drift() == []
    path.write_text(path.read_text().replace("Intro line.", "Another intro."))
    assert [(i["id"], i["problem"], i["path"]) for i in find_drift()] == [
        (node.pk, "changed", str(path))
    ]


def test_a_vault_under_a_folder_with_a_hash_in_its_name_has_no_false_drift(db, tmp_path):
    _intro, path = rooted_vault_section(tmp_path, folder="notes#2026", slug="")
    section = Node.objects.get(source=f"{path}#boiler")
    root(section.pk, adopting_words="True.", expected_body_hash=section.body_hash, owner="owner")
    assert find_drift() == []
    path.write_text(path.read_text().replace("March", "April"))
    assert [(i["id"], i["problem"]) for i in find_drift()] == [(section.pk, "changed")]


def _changed_on(path) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).isoformat()


def test_each_report_of_a_whole_file_says_what_changed_when_and_both_hashes(imported):
    node, path = imported
    path.write_text("Bread: flour, water, salt, yeast.")
    assert find_drift() == [
        {
            "id": node.pk,
            "path": str(path),
            "section": None,
            "problem": "changed",
            "recorded": node.metadata["file_hash"],
            "current": hashlib.sha256(path.read_bytes()).hexdigest(),
            "changed_at": _changed_on(path),
        }
    ]
    path.unlink()
    assert find_drift() == [
        {
            "id": node.pk,
            "path": str(path),
            "section": None,
            "problem": "missing",
            "recorded": node.metadata["file_hash"],
            "current": None,
            "changed_at": None,
        }
    ]


def test_each_report_of_a_section_names_it_and_says_when_its_file_changed(rooted_section):
    node, path = rooted_section
    path.write_text(path.read_text().replace("March", "April"))
    [changed] = find_drift()
    assert {k: changed[k] for k in ("section", "problem", "changed_at")} == {
        "section": "boiler",
        "problem": "changed",
        "changed_at": _changed_on(path),
    }
    path.write_text("Intro line.\n")
    assert find_drift() == [
        {
            "id": node.pk,
            "path": f"{path}#boiler",
            "section": "boiler",
            "problem": "section missing",
            "recorded": node.body_hash,
            "current": None,
            "changed_at": _changed_on(path),
        }
    ]


def test_keeping_words_against_their_file_is_refused_for_what_does_not_drift(imported, make_note):
    from memory.custody.drift import accept_drift
    from memory.errors import Conflict, NotFound

    node, _path = imported
    note = make_note("Not from a file.")
    said = {}
    for node_id in (node.pk, note.pk, 10**9):
        with pytest.raises((Conflict, NotFound)) as refused:
            accept_drift(node_id, actor="owner")
        said[node_id] = (type(refused.value), refused.value.code, refused.value.message)
    assert said == {
        node.pk: (Conflict, "no_drift", f"node {node.pk} does not drift from its file"),
        note.pk: (Conflict, "not_file_ground", f"node {note.pk} is not ground from a file"),
        10**9: (NotFound, "not_found", f"node {10**9} does not exist"),
    }


def test_a_missing_file_can_be_kept_once_and_then_no_longer_drifts(imported):
    from memory.custody.drift import accept_drift
    from memory.errors import Conflict
    from memory.models import Event, EventKind

    node, path = imported
    path.unlink()
    assert accept_drift(node.pk, actor="owner")["problem"] == "missing"
    assert Event.objects.get(kind=EventKind.DRIFT_ACCEPTED).detail == {
        "problem": "missing",
        "current": None,
    }
    assert find_drift() == []
    with pytest.raises(Conflict) as refused:
        accept_drift(node.pk, actor="owner")
    assert refused.value.code == "no_drift"


def test_keeping_a_relative_source_reads_it_against_the_base_given(db, tmp_path):
    from memory.custody.drift import accept_drift

    node = _rooted_relative(tmp_path, "A, changed.")
    kept = accept_drift(node.pk, actor="owner", base=tmp_path)
    assert (kept["problem"], kept["current"]) == (
        "changed",
        hashlib.sha256(b"A, changed.").hexdigest(),
    )


def test_a_section_whose_heading_has_no_letters_is_found_in_its_file(db, tmp_path):
    from memory.importers.markdown import ingest

    vault = tmp_path / "vault"
    vault.mkdir()
    path = vault / "moods.md"
    path.write_text("# 🙂\n\nA good day.\n")
    ingest(vault)
    node = Node.objects.get(metadata__heading="🙂")
    assert node.source == f"{path}#"  # the heading's slug is empty
    root(node.pk, adopting_words="True.", expected_body_hash=node.body_hash, owner="owner")
    assert find_drift() == []
