"""Moving a whole memory to another database and back loses nothing (memory/custody/transfer.py)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory.custody.chain_verify import verify
from memory.models import Node
from tests._helpers import ROOT
from tests._helpers.realdb import database_env


def _rows(path: Path) -> list:
    """The export's header and rows, parsed (JSON key order is the engine's business)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, rows: list) -> Path:
    """The rows as an export file: one JSON line each."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _manage(env: dict[str, str], *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert (done.returncode == 0) == ok, done.stderr
    return done


def _sqlite(tmp_path: Path, name: str) -> dict[str, str]:
    """A child's environment on a SQLite file of its own (whatever engine this run is on)."""
    env = {**os.environ, "GROVE_DATA_DIR": str(tmp_path), "GROVE_SECRET_KEY": "k" * 50}
    env.pop("GROVE_DATABASE_URL", None)
    return {**env, "GROVE_DB_PATH": str(tmp_path / name)}


@pytest.fixture
def demo_export(tmp_path) -> Path:
    """The demo memory (nodes, edges, events of every kind, a scroll) exported from SQLite."""
    source = _sqlite(tmp_path, "a.sqlite3")
    _manage(source, "migrate", "-v0")
    _manage(source, "demo")
    _manage(source, "export", str(tmp_path / "a.jsonl"))
    return tmp_path / "a.jsonl"


def test_import_refuses_a_database_that_holds_a_memory(demo_export, tmp_path):
    refused = _manage(_sqlite(tmp_path, "a.sqlite3"), "import", str(demo_export), ok=False)
    assert "nothing imported: the target database already holds a memory" in refused.stderr


def test_a_forged_export_is_refused_and_the_target_stays_empty(demo_export, tmp_path):
    rows = _rows(demo_export)
    events = [i for i, row in enumerate(rows) if row.get("m") == "memory.Event"]
    assert events  # the fixture holds events to forge
    row = rows[events[len(events) // 2]]["r"]
    assert row[4] != "forger"  # the actor column, as exported
    row[4] = "forger"
    forged = _write(tmp_path / "forged.jsonl", rows)
    target = _sqlite(tmp_path, "b.sqlite3")
    _manage(target, "migrate", "-v0")
    refused = _manage(target, "import", str(forged), ok=False)
    assert "the hash chain breaks" in refused.stderr
    _manage(target, "export", str(tmp_path / "b.jsonl"))
    assert set(_rows(tmp_path / "b.jsonl")[0]["counts"].values()) == {0}
    # The unforged file goes in and verifies.
    assert "imported and verified" in _manage(target, "import", str(demo_export)).stdout


@pytest.mark.postgres_only  # needs both engines: this run's PostgreSQL and a SQLite file
def test_sqlite_to_postgresql_and_back_loses_nothing(demo_export, real_db, tmp_path):
    postgres = {**_sqlite(tmp_path, "unused"), **database_env(real_db)}
    back_to_sqlite = _sqlite(tmp_path, "b.sqlite3")
    imported = _manage(postgres, "import", str(demo_export)).stdout
    assert "imported and verified" in imported
    _manage(postgres, "export", str(tmp_path / "pg.jsonl"))
    _manage(back_to_sqlite, "migrate", "-v0")
    _manage(back_to_sqlite, "import", str(tmp_path / "pg.jsonl"))
    _manage(back_to_sqlite, "export", str(tmp_path / "back.jsonl"))
    # Every check on both copies (after the exports: a verification stores a checkpoint row).
    _manage(postgres, "integrity", "--full")
    _manage(back_to_sqlite, "integrity", "--full")
    there, back = _rows(demo_export), _rows(tmp_path / "back.jsonl")
    assert there[0]["counts"]["memory.Node"] > 10 and there[0]["counts"]["memory.Event"] > 10
    assert there[0] == back[0]  # the same counts and chain tail
    assert there == back  # and every row, column by column
    # The PostgreSQL copy, as this process sees it: its chain verifies from the first event.
    assert Node.objects.count() == there[0]["counts"]["memory.Node"]
    assert verify().ok and verify().count == there[0]["counts"]["memory.Event"]


@pytest.fixture(scope="module")
def demo_rows(tmp_path_factory) -> list:
    """The demo memory's export, its vectors embedded, parsed once for the damaged and
    doctored files below."""
    where = tmp_path_factory.mktemp("demo")
    source = _sqlite(where, "a.sqlite3")
    _manage(source, "migrate", "-v0")
    _manage(source, "demo")
    _manage(source, "sleep", "--step", "embed")
    _manage(source, "export", str(where / "a.jsonl"))
    return _rows(where / "a.jsonl")


def _column(model: str, name: str) -> int:
    from memory.custody.transfer import MODELS, _columns

    (found,) = [m for m in MODELS if m._meta.label == model]
    return _columns(found).index(name)


def _rooted_node(rows: list) -> int:
    kind, node = _column("memory.Event", "kind"), _column("memory.Event", "node_id")
    return next(
        r["r"][node] for r in rows if r.get("m") == "memory.Event" and r["r"][kind] == "rooted"
    )


def _duplicate_a_node(rows: list) -> None:
    first = next(i for i, r in enumerate(rows) if r.get("m") == "memory.Node")
    rows.insert(first + 1, json.loads(json.dumps(rows[first])))


def _count_as_many(rows: list) -> None:
    next(r for r in rows if r.get("m") == "memory.Node")["r"][
        _column("memory.Node", "access_count")
    ] = "many"


def _rewrite_a_ground_body(rows: list) -> None:
    import hashlib

    node_id = _rooted_node(rows)
    row = next(r["r"] for r in rows if r.get("m") == "memory.Node" and r["r"][0] == node_id)
    row[_column("memory.Node", "body")] = "Rewritten ground."
    row[_column("memory.Node", "body_hash")] = hashlib.sha256(b"Rewritten ground.").hexdigest()


@pytest.mark.parametrize("damage", [_duplicate_a_node, _count_as_many, _rewrite_a_ground_body])
def test_a_damaged_file_imports_nothing_and_says_why(demo_rows, tmp_path, damage):
    rows = json.loads(json.dumps(demo_rows))
    damage(rows)
    damaged = _write(tmp_path / "damaged.jsonl", rows)
    target = _sqlite(tmp_path, "b.sqlite3")
    _manage(target, "migrate", "-v0")
    refused = _manage(target, "import", str(damaged), ok=False)
    assert "nothing imported: " in refused.stderr and "Traceback" not in refused.stderr
    _manage(target, "export", str(tmp_path / "b.jsonl"))
    assert set(_rows(tmp_path / "b.jsonl")[0]["counts"].values()) == {0}


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("content_key", "0" * 64),
        ("created_at", {"$dt": "2020-01-01T00:00:00+00:00"}),
        ("referent_time", {"$dt": "2020-01-01T00:00:00+00:00"}),
    ],
)
def test_a_doctored_node_field_imports_nothing_and_names_it(demo_rows, tmp_path, column, value):
    rows = json.loads(json.dumps(demo_rows))
    row = next(r["r"] for r in rows if r.get("m") == "memory.Node")
    row[_column("memory.Node", column)] = value
    doctored = _write(tmp_path / "doctored.jsonl", rows)
    target = _sqlite(tmp_path, "b.sqlite3")
    _manage(target, "migrate", "-v0")
    refused = _manage(target, "import", str(doctored), ok=False)
    assert f"nothing imported: node {row[0]}: {column} differ from its arrival" in refused.stderr


@pytest.fixture(scope="module")
def token_rows(tmp_path_factory) -> list:
    """An export holding a read-only token and a revoked one, minted by `manage.py token`."""
    where = tmp_path_factory.mktemp("tokens")
    source = _sqlite(where, "a.sqlite3")
    _manage(source, "migrate", "-v0")
    _manage(source, "token", "create", "scout", "--domain", "personal", "--read-only")
    _manage(source, "token", "create", "desk", "--domain", "home")
    _manage(source, "token", "revoke", "desk")
    _manage(source, "export", str(where / "a.jsonl"))
    return _rows(where / "a.jsonl")


@pytest.mark.parametrize(
    ("name", "column", "value"),
    [
        ("scout", "domains", ["personal", "work"]),  # given another domain
        ("scout", "read_only", False),  # made writable
        ("desk", "revoked_at", None),  # un-revoked
    ],
)
def test_a_doctored_token_imports_nothing_and_names_it(token_rows, tmp_path, name, column, value):
    rows = json.loads(json.dumps(token_rows))
    row = next(
        r["r"]
        for r in rows
        if r.get("m") == "memory.ApiToken" and r["r"][_column("memory.ApiToken", "name")] == name
    )
    assert row[_column("memory.ApiToken", column)] != value  # the fixture holds another value
    row[_column("memory.ApiToken", column)] = value
    doctored = _write(tmp_path / "doctored.jsonl", rows)
    target = _sqlite(tmp_path, "b.sqlite3")
    _manage(target, "migrate", "-v0")
    refused = _manage(target, "import", str(doctored), ok=False)
    assert f"nothing imported: token {row[0]}: {column} differ from its grant" in refused.stderr


def test_an_export_of_granted_tokens_imports(token_rows, tmp_path):
    export = _write(tmp_path / "a.jsonl", token_rows)
    target = _sqlite(tmp_path, "b.sqlite3")
    _manage(target, "migrate", "-v0")
    assert "imported and verified" in _manage(target, "import", str(export)).stdout


@pytest.mark.django_db
@pytest.mark.parametrize("header", ["[1, 2]", '"grove-export"', "null", "7", "{not json", ""])
def test_a_header_that_is_not_an_export_header_is_refused_plainly(tmp_path, header):
    from memory.custody.transfer import FORMAT, TransferError, import_into_empty

    path = tmp_path / "odd.jsonl"
    path.write_text(header + "\n", encoding="utf-8")
    with pytest.raises(TransferError, match=f"is not a {FORMAT} file"):
        import_into_empty(path)
    assert not Node.objects.exists()


# The same moves in this process, so the engine's functions are seen by coverage and mutmut
# (the tests above run manage.py in a child).


def _exported_then_rolled_back(build, settings, tmp_path) -> list:
    """What `build` writes, exported in this process and then rolled back: the test database is
    empty again for the import."""
    import io

    from django.db import connection, transaction

    from memory.custody.transfer import export

    out = io.StringIO()
    with transaction.atomic():
        build()
        export(out)
        transaction.set_rollback(True)
    if connection.vendor == "postgresql":
        # A rollback leaves PostgreSQL's sequences where the build moved them: start them again,
        # as in the freshly migrated database an import is for.
        from memory.custody.transfer import MODELS

        with connection.cursor() as cursor:
            for model in MODELS:
                table = model._meta.db_table
                cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), 1, false)")
    # The checkpoints rolled back went to the anchor file: the import starts a file of its own.
    settings.GROVE_CHAIN_ANCHOR = tmp_path / "anchor-after-rollback.jsonl"
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.fixture
def here(db, settings, tmp_path) -> list:
    """The demo memory, its vectors embedded, exported in this process and then rolled back."""
    from dashboard.demo import load_demo
    from memory.vectors.embed import embed_missing

    def demo() -> None:
        load_demo()
        embed_missing()

    rows = _exported_then_rolled_back(demo, settings, tmp_path)
    assert not Node.objects.exists()
    return rows


def _refused(path: Path) -> str:
    from memory.custody.transfer import TransferError, counts, import_into_empty

    with pytest.raises(TransferError) as refused:
        import_into_empty(path)
    assert set(counts().values()) == {0}  # nothing kept
    return str(refused.value)


def test_the_demo_export_imports_here_row_for_row(here, tmp_path, monkeypatch):
    from memory.custody import transfer
    from memory.models import Event, Vector

    # Batches of 7 rows: a table's last batch and a batch cut inside a table both go in.
    monkeypatch.setattr(transfer, "_BATCH", 7)
    header = here[0]
    assert header["counts"]["memory.Node"] > 7 and header["counts"]["memory.Vector"] > 0
    assert transfer.import_into_empty(_write(tmp_path / "a.jsonl", here)) == header["counts"]
    assert transfer.counts() == header["counts"]
    assert (
        Event.objects.order_by("-id").values_list("chain_hash", flat=True)[0]
        == header["chain_tail"]
    )
    node = next(r["r"] for r in here if r.get("m") == "memory.Node")
    stored = Node.objects.get(pk=node[0])
    assert stored.body == node[_column("memory.Node", "body")]
    assert stored.created_at.isoformat() == node[_column("memory.Node", "created_at")]["$dt"]
    vector = next(r["r"] for r in here if r.get("m") == "memory.Vector")
    data = bytes(Vector.objects.get(pk=vector[0]).data)
    assert base64.b64encode(data).decode() == vector[_column("memory.Vector", "data")]["$b64"]
    assert verify().ok
    # The ids go on past the imported ones (PostgreSQL's sequences are moved).
    from memory.write import write_node

    after = write_node(
        body="Written after the import.",
        kind="import",
        jurisdiction="wild",
        signature="importer",
        origins=[],
        source="after.md",
    ).node
    assert after.pk > max(r["r"][0] for r in here if r.get("m") == "memory.Node")


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        (_duplicate_a_node, ("memory_node_no_replace", "duplicate key")),
        (_count_as_many, ("expected a number but got 'many'",)),
        (_rewrite_a_ground_body, ("memory_event_rooted_hash_matches",)),
    ],
)
def test_a_damaged_file_keeps_nothing_here(here, tmp_path, damage, named):
    rows = json.loads(json.dumps(here))
    damage(rows)
    said = _refused(_write(tmp_path / "d.jsonl", rows))
    # The first line of what the database or the field said, whichever engine.
    assert said.startswith("a row is refused: ") and any(n in said for n in named), said


def test_each_disagreement_with_the_header_is_named(here, tmp_path):
    from memory.custody.transfer import counts

    rows = json.loads(json.dumps(here))
    assert rows[0]["counts"]["memory.Edge"] > 0
    have = dict(rows[0]["counts"])
    rows[0]["counts"]["memory.Edge"] += 1
    said = _refused(_write(tmp_path / "c.jsonl", rows))
    assert said == f"row counts {have} differ from the export's {rows[0]['counts']}"
    assert set(counts()) == set(have)  # the counts named are every table's
    rows[0]["chain_tail"] = "0" * 64
    said = _refused(_write(tmp_path / "t.jsonl", rows))
    assert said.split("; ") == [
        f"row counts {have} differ from the export's {rows[0]['counts']}",
        "the chain's last hash differs from the export's",
    ]
    rows = json.loads(json.dumps(here))
    rows[0]["chain_tail"] = "0" * 64
    said = _refused(_write(tmp_path / "t.jsonl", rows))
    assert said == "the chain's last hash differs from the export's"


def test_a_forged_event_breaks_the_chain_here(here, tmp_path):
    rows = json.loads(json.dumps(here))
    actor = _column("memory.Event", "actor")
    event = next(r["r"] for r in rows if r.get("m") == "memory.Event")
    assert event[actor] != "forger"
    event[actor] = "forger"
    assert _refused(_write(tmp_path / "f.jsonl", rows)).startswith("the hash chain breaks: ")


def test_at_most_five_nodes_are_named_for_each_check(here, tmp_path):
    rows = json.loads(json.dumps(here))
    created = _column("memory.Node", "created_at")
    nodes = [r["r"] for r in rows if r.get("m") == "memory.Node"]
    assert len(nodes) > 6
    for node in nodes[:7]:
        node[created] = {"$dt": "2020-01-01T00:00:00+00:00"}
    said = _refused(_write(tmp_path / "n.jsonl", rows))
    assert said.count("differ from its arrival") == 5, said
    rows = json.loads(json.dumps(here))
    body = _column("memory.Node", "body")
    rooted = _rooted_node(rows)
    unrooted = [r["r"] for r in rows if r.get("m") == "memory.Node" and r["r"][0] != rooted]
    assert len(unrooted) > 6
    for node in unrooted[:7]:
        node[body] += " (edited)"
    said = _refused(_write(tmp_path / "b.jsonl", rows))
    assert said.count("sha256 of the body is not its body_hash") == 5, said


def test_a_line_that_is_no_row_is_named_by_its_number(here, tmp_path):
    header, first, *rest = json.loads(json.dumps(here))
    unknown = {"m": "memory.Secret", "r": [1]}
    assert "unknown table 'memory.Secret'" in _refused(
        _write(tmp_path / "u.jsonl", [header, first, unknown, *rest])
    )
    short = {"m": first["m"], "r": first["r"][:-1]}
    said = _refused(_write(tmp_path / "s.jsonl", [header, short, *rest]))
    assert said == f"a {first['m']} row has the wrong number of columns"
    for bad in (["not", "a", "row"], {"m": first["m"]}, "text"):
        said = _refused(_write(tmp_path / "b.jsonl", [header, first, bad, *rest]))
        assert said.startswith("line 3 is not a row of an export")


@pytest.mark.django_db
def test_an_export_here_writes_each_row_as_stored(make_note):
    import io

    from memory.custody.transfer import FORMAT, counts, export
    from memory.models import Event

    note = make_note("Café au lait, 9:41:07.123456")
    out = io.StringIO()
    assert export(out) == counts()
    header, *rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert header == {
        "format": FORMAT,
        "counts": counts(),
        "chain_tail": Event.objects.order_by("-id").values_list("chain_hash", flat=True)[0],
    }
    assert len(rows) == sum(counts().values())
    assert "Café au lait" in out.getvalue()  # the words as written, not \u escapes
    nodes = [r["r"] for r in rows if r["m"] == "memory.Node"]
    assert [n[0] for n in nodes] == sorted(n[0] for n in nodes)
    (mine,) = [n for n in nodes if n[0] == note.pk]
    assert mine[_column("memory.Node", "created_at")] == {"$dt": note.created_at.isoformat()}
    assert note.created_at.microsecond  # the fixture's instant has a fraction to lose


def test_an_import_into_a_memory_is_refused_here(make_note, tmp_path):
    from memory.custody.transfer import TransferError, counts, import_into_empty

    make_note("Already here.")
    before = counts()
    path = tmp_path / "any.jsonl"
    path.write_text('{"format": "grove-export/1"}\n', encoding="utf-8")
    with pytest.raises(TransferError) as refused:
        import_into_empty(path)
    assert str(refused.value) == "the target database already holds a memory: import needs it empty"
    assert counts() == before


def test_at_most_five_tokens_are_named(db, settings, tmp_path):
    from memory.tokens import create_token

    def tokens() -> None:
        for n in range(7):
            create_token(name=f"agent-{n}", domains=["home"])

    rows = _exported_then_rolled_back(tokens, settings, tmp_path)
    tokens = [r["r"] for r in rows if r.get("m") == "memory.ApiToken"]
    assert len(tokens) == 7
    for token in tokens:
        token[_column("memory.ApiToken", "read_only")] = True
    said = _refused(_write(tmp_path / "t.jsonl", rows))
    assert said.count("read_only differ from its grant") == 5, said


def test_a_refusal_with_no_words_is_named_by_its_kind():
    from django.db import IntegrityError

    from memory.custody.transfer import _first_line

    assert _first_line(IntegrityError()) == "IntegrityError"
    assert _first_line(IntegrityError("  UNIQUE failed\nat row 3")) == "UNIQUE failed"
