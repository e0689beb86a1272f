from __future__ import annotations

import hashlib
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from memory.importers.markdown import ingest, sections, wikilinks
from memory.models import Edge, Event, Node
from review.ceremony import reject

A = """# Garden
Tomatoes go by the south wall. See [[Beds]] and [[Nowhere]].

## Watering
Every second day, mornings.
"""
BEDS = "Raised beds, three of them. Back to [[garden|the garden]].\n"
C = "---\ntags: [kitchen]\n---\n# Soup\nLeek and potato, from ![[Beds#soil]].\n"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "sub").mkdir(parents=True)
    (root / ".obsidian").mkdir()
    (root / "garden.md").write_text(A)
    (root / "Beds.md").write_text(BEDS)
    (root / "sub" / "soup.md").write_text(C)
    (root / ".obsidian" / "workspace.md").write_text("# machinery, not a note")
    (root / "picture.png").write_bytes(b"\x89PNG")
    return root


def _imports(root: Path):
    return Node.objects.filter(kind="import", source__startswith=str(root))


def test_it_imports_one_node_per_file_with_its_hash(db, vault):
    out = StringIO()
    call_command("ingest", str(vault), "--format", "vault", stdout=out)
    imports = {Path(n.source).name: n for n in _imports(vault)}
    assert set(imports) == {"garden.md", "Beds.md", "soup.md"}
    garden = imports["garden.md"]
    assert garden.metadata["file_hash"] == hashlib.sha256(A.encode()).hexdigest()
    assert garden.jurisdiction == "wild" and garden.source == str(vault / "garden.md")
    assert "3 files (3 new" in out.getvalue() and "1 to missing notes" in out.getvalue()


def test_sections_become_wild_notes_derived_from_their_file(db, vault):
    ingest(vault)
    garden = _imports(vault).get(source=str(vault / "garden.md"))
    notes = Node.objects.filter(out_edges__to_node=garden, out_edges__kind="derived_from")
    assert sorted(n.body.splitlines()[0] for n in notes) == ["# Garden", "## Watering"]
    assert {n.kind for n in notes} == {"note"} and {n.jurisdiction for n in notes} == {"wild"}


def test_front_matter_is_metadata_not_a_note(db, vault):
    ingest(vault)
    soup = _imports(vault).get(source=str(vault / "sub" / "soup.md"))
    assert soup.metadata["front_matter"] == "tags: [kitchen]"
    assert not Node.objects.filter(body__contains="tags:").exists()


def test_wikilinks_become_cites_between_files_and_missing_ones_are_counted(db, vault):
    summary = ingest(vault)
    by_name = {Path(n.source).name: n.pk for n in _imports(vault)}
    cites = set(Edge.objects.filter(kind="cites").values_list("from_node", "to_node"))
    assert cites == {
        (by_name["garden.md"], by_name["Beds.md"]),
        (by_name["Beds.md"], by_name["garden.md"]),
        (by_name["soup.md"], by_name["Beds.md"]),
    }
    assert (summary.links, summary.links_new, summary.links_missing) == (3, 3, 1)


def test_importing_the_same_vault_twice_adds_nothing(db, vault, counts):
    first = ingest(vault)
    assert first.nodes_created == 3 + 4  # three files, four sections
    before = counts()
    second = ingest(vault)
    assert counts() == before
    assert (second.files_unchanged, second.nodes_created, second.links_new) == (3, 0, 0)


def test_a_changed_file_adds_exactly_its_changed_sections(db, vault):
    ingest(vault)
    old_import = _imports(vault).get(source=str(vault / "garden.md"))
    nodes_before = set(Node.objects.values_list("pk", flat=True))
    (vault / "garden.md").write_text(A.replace("Every second day", "Every third day"))
    summary = ingest(vault)
    added = Node.objects.exclude(pk__in=nodes_before)
    assert sorted(n.kind for n in added) == ["import", "note"]
    assert added.get(kind="note").body == "## Watering\nEvery third day, mornings."
    assert (summary.files_changed, summary.sections_new, summary.sections_existing) == (1, 1, 1)
    old_import.refresh_from_db()
    assert old_import.is_live  # the old stays on record
    new_import = added.get(kind="import")
    assert new_import.metadata["previous_import"] == old_import.pk
    unchanged = Node.objects.get(body__startswith="# Garden")
    # Re-arrival is recorded as an event, never as an edge onto a node already written.
    assert not Edge.objects.filter(from_node=unchanged, to_node=new_import).exists()
    rearrived = Event.objects.get(node=unchanged, kind="rearrived")
    assert rearrived.detail["origins"] == [[new_import.pk, "derived_from"]]


def test_a_rejected_section_stays_out_and_the_rest_comes_in(db, vault):
    ingest(vault / "Beds.md")
    rejected = Node.objects.get(kind="note", body__startswith="Raised beds")
    reject(rejected.pk, owner="owner", reason="not ours")
    (vault / "Beds.md").write_text(BEDS + "\n# Soil\nLoam, some clay.\n")
    summary = ingest(vault / "Beds.md")
    assert (summary.sections_refused, summary.sections_new) == (1, 1)
    assert Node.objects.filter(body__startswith="Raised beds").count() == 1


def test_a_file_that_is_not_text_fails_alone(db, vault):
    (vault / "broken.md").write_bytes(b"\xff\xfe\x00bad")
    summary = ingest(vault)
    assert (summary.files_failed, summary.files_new) == (1, 3)
    assert "broken.md: not UTF-8" in str(summary)


def test_a_long_import_shows_a_progress_bar_on_stderr(db, vault, capsys):
    ingest(vault, progress=True)
    assert "import" in capsys.readouterr().err


def test_sections_split_on_headings_outside_code_fences():
    text = "intro\n# One\nx\n```\n# not a heading\n```\n## Two\ny\n#hashtag stays\n"
    assert [h for h, _ in sections(text)] == ["", "One", "Two"]
    assert "# not a heading" in sections(text)[1][1]


def test_wikilink_forms():
    text = "[[A]] [[B|alias]] [[C#head]] ![[D^block]] [[A]] [not](link)"
    assert wikilinks(text) == ["A", "B", "C", "D"]
