"""What is true as a folder of markdown: ground only, with its sources and dates."""

from __future__ import annotations

import io
import json
import stat
import zipfile

import pytest
from django.core.management import CommandError, call_command

from memory.custody.ground_markdown import documents
from memory.models import Node
from review.ceremony import seal
from tests._helpers.acts import root_as_owner, supersede_as_owner


@pytest.fixture
def truths(make_note):
    ground = make_note("The boiler was serviced in March.", source="/vault/house.md#boiler")
    root_as_owner(ground, words="I checked the invoice.")
    old = make_note("The doctor is Dr. Alves in Alvalade.")
    root_as_owner(old)
    supersede_as_owner(old, "The doctor is Dr. Alves in Campo de Ourique.", words="She moved.")
    sealed = make_note("The safe's code is 4711.")
    root_as_owner(sealed)
    seal(sealed.pk, owner="owner")
    unreviewed = make_note("Maybe the boiler needs a new valve.")
    return {"ground": ground, "old": old, "sealed": sealed, "unreviewed": unreviewed}


def _texts() -> dict[str, str]:
    """The node files (the index aside)."""
    return {path: text for path, text in documents() if path != "README.md"}


def test_each_ground_node_is_a_file_with_its_source_and_root(truths):
    texts = _texts()
    [boiler] = [t for t in texts.values() if "serviced in March" in t]
    front = dict(line.split(": ", 1) for line in boiler.split("---\n")[1].splitlines())
    assert json.loads(front["source"]) == "/vault/house.md#boiler"
    assert json.loads(front["adopting_words"]) == "I checked the invoice."
    assert json.loads(front["rooted"]) and json.loads(front["arrived"])
    assert f"{truths['ground'].pk}-" in next(p for p, t in texts.items() if t == boiler)


def test_only_ground_is_written(truths):
    written = "\n".join(_texts().values())
    assert Node.objects.filter(body__contains="4711").exists()  # the fixture holds them
    assert "4711" not in written  # sealed words stay hidden
    assert "Alvalade" not in written  # superseded: no longer true
    assert "new valve" not in written  # unreviewed: never true
    assert "Campo de Ourique" in written


def test_a_replacement_names_what_it_replaced(truths):
    [new] = [t for t in _texts().values() if "Campo de Ourique" in t]
    assert f"replaces: {truths['old'].pk}" in new


def test_a_body_cannot_close_the_front_matter(make_note):
    node = make_note('A note\n---\nid: 999\nsource: "x"')
    root_as_owner(node, words='tricky "words"\n---')
    [text] = [t for t in _texts().values() if "A note" in t]
    front = text.split("---\n")[1]
    assert json.loads(dict(line.split(": ", 1) for line in front.splitlines())["id"]) == node.pk


def test_the_command_writes_a_private_folder_and_refuses_a_full_one(truths, tmp_path, capsys):
    folder = tmp_path / "truth"
    call_command("export", ground_markdown=folder)
    assert "wrote 2 ground nodes" in capsys.readouterr().out
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.md"))
    assert len(files) == 3 and "README.md" in files
    assert stat.S_IMODE(next(folder.rglob("*-the-doctor-*.md")).stat().st_mode) == 0o600
    folders = [folder, *(p for p in folder.rglob("*") if p.is_dir())]
    assert len(folders) > 1  # a domain's folder under the top one
    assert {stat.S_IMODE(p.stat().st_mode) for p in folders} == {0o700}  # the owner's alone
    with pytest.raises(CommandError, match="not empty"):
        call_command("export", ground_markdown=folder)


def test_the_download_is_the_same_folder_and_counts_no_read(truths, owner_client):
    before = Node.objects.get(pk=truths["ground"].pk).access_count
    answer = owner_client.get("/nodes/ground.zip")
    assert answer.status_code == 200 and answer["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(answer.content))
    names = archive.namelist()
    assert {i.compress_type for i in archive.infolist()} == {zipfile.ZIP_DEFLATED}
    assert sorted(names) == sorted(f"grove-ground/{path}" for path, _ in documents())
    assert Node.objects.get(pk=truths["ground"].pk).access_count == before
    assert 'id="ground-markdown"' in owner_client.get("/nodes/").content.decode()


WORDS = (
    "The boiler was serviced in March, by Ana,\n  who also bled every radiator upstairs and down."
)


def test_a_ground_file_and_its_index_line_say_exactly_what_was_rooted(make_note):
    from memory.custody.ground_markdown import _slug
    from memory.models import Event

    node = make_note(
        WORDS,
        source="/vault/café.md#boiler",
        domain="home and garden shed",
        referent_time="2026-03-14T09:30:00+00:00",
    )
    root_as_owner(node, words="I checked the invoice.")
    node.refresh_from_db()
    rooted = Event.objects.get(node=node, kind="rooted")
    path = f"home-and-garden/{node.pk}-the-boiler-was-serviced-in-march-by-ana.md"
    plain = make_note("The shed key hangs by the door.", domain="home and garden shed")
    root_as_owner(plain)
    fields = {
        "id": node.pk,
        "domain": "home and garden shed",
        "kind": node.kind,
        "jurisdiction": node.jurisdiction,
        "source": "/vault/café.md#boiler",
        "written_by": node.signature,
        "arrived": node.created_at.isoformat(),
        "about_time": "2026-03-14T09:30:00+00:00",
        "rooted": rooted.at.isoformat(),
        "rooted_by": "owner",
        "adopting_words": "I checked the invoice.",
        "body_sha256": node.body_hash,
    }
    front = "".join(
        f"{key}: {json.dumps(value, ensure_ascii=False)}\n" for key, value in fields.items()
    )
    body = WORDS + "\n"
    first = "The boiler was serviced in March, by Ana, who also bled every radiator upstairs "
    assert len(first) == 80
    day = rooted.at.isoformat()[:10]
    made = dict(documents())
    assert made[path] == f"---\n{front}---\n\n{body}"
    assert '"about_time": ""' not in made[path] and 'about_time: ""' in next(
        text for name, text in made.items() if name.startswith(f"home-and-garden/{plain.pk}-")
    )
    assert made["README.md"].splitlines()[:3] == [
        "# What is true",
        "",
        f"- [#{node.pk}]({path}) {first} (home and garden shed, rooted {day})",
    ]
    assert list(made)[-1] == "README.md" and len(made) == 3
    assert _slug("Ein Übermaß an Wörtern, eins zwei drei vier fünf sechs") == (
        "ein-berma-an-w-rtern-eins-zwei-drei-vier"
    )
    assert _slug("?!") == "node"
    assert _slug("¿Qué?") == "qu"  # no dash at either end
    assert _slug("x" * 70) == "x" * 60
    assert _slug("a " * 30 + "b", words=40) == "a-" * 29 + "a"  # no dash left at the cut


def test_with_nothing_ground_the_index_says_so(make_note):
    make_note("Not reviewed yet.")
    assert list(documents()) == [("README.md", "# What is true\n\nNothing is ground yet.\n")]


def test_a_later_act_on_a_ground_node_does_not_become_its_root(make_note):
    from memory.models import Event
    from review.ceremony import unseal

    node = make_note("The spare key is with Rui.")
    root_as_owner(node, words="Rui confirmed.")
    rooted = Event.objects.get(node=node, kind="rooted")
    seal(node.pk, owner="owner:phone", reason="for now")
    unseal(node.pk, owner="owner:laptop", reason="fine again")
    [text] = _texts().values()  # ground again after the unseal
    front = dict(line.split(": ", 1) for line in text.split("---\n")[1].splitlines())
    assert json.loads(front["rooted"]) == rooted.at.isoformat()
    assert json.loads(front["rooted_by"]) == rooted.actor
    assert json.loads(front["adopting_words"]) == "Rui confirmed."
