from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from memory.errors import Invalid, NotFound, TooLarge
from memory.models import Edge, Node, Trust
from memory.scroll import (
    READ_LIMIT,
    commit_turn,
    read_scroll,
    read_slice,
    read_slices,
    read_tail,
    record_hash,
    scroll_dir,
    verify_scroll,
)
from tests._helpers.realdb import (
    CHILD_PRELUDE,
    run_together,
)


@pytest.fixture(autouse=True)
def scrolls(tmp_path, settings):
    settings.GROVE_SCROLL_DIR = tmp_path / "scroll"
    return settings.GROVE_SCROLL_DIR


def _lines(conversation: str) -> list[dict]:
    return [json.loads(line) for line in (scroll_dir() / f"{conversation}.jsonl").open()]


def test_it_appends_a_record_and_points_the_pair_at_it(db):
    pair = commit_turn(conversation="kitchen", user="Is the oven on?", assistant="No.").node
    (record,) = _lines("kitchen")
    assert (record["seq"], record["user"], record["assistant"]) == (1, "Is the oven on?", "No.")
    assert record["sha256"] == record_hash(record)
    assert (pair.kind, pair.jurisdiction) == ("pair", "home")
    assert (pair.scroll_path, pair.scroll_offset, pair.scroll_hash) == (
        "kitchen.jsonl",
        0,
        record["sha256"],
    )
    assert pair.body == "user: Is the oven on?\nassistant: No."


def test_sequence_numbers_continue_and_pairs_respond_to_the_previous(db):
    first = commit_turn(conversation="c1", user="one", assistant="1").node
    second = commit_turn(conversation="c1", user="two", assistant="2").node
    other = commit_turn(conversation="c2", user="elsewhere", assistant="x").node
    assert [r["seq"] for r in _lines("c1")] == [1, 2]
    assert second.scroll_offset == len((scroll_dir() / "c1.jsonl").read_bytes().split(b"\n")[0]) + 1
    assert Edge.objects.filter(from_node=second, to_node=first, kind="responds_to").exists()
    assert not Edge.objects.filter(from_node=other).exists()


def test_identical_turns_are_two_pairs(db):
    a = commit_turn(conversation="c", user="hi", assistant="hello").node
    b = commit_turn(conversation="c", user="hi", assistant="hello").node
    assert a.pk != b.pk


@pytest.mark.parametrize(
    "name", ["../etc/passwd", "a/b", ".hidden", "", "x" * 200, "a\x00b", "-rf"]
)
def test_it_refuses_unsafe_conversation_names(db, name, counts, scrolls):
    before = counts()
    with pytest.raises(Invalid, match="conversation name"):
        commit_turn(conversation=name, user="u", assistant="a")
    assert counts() == before
    assert not Path(scrolls).exists() or not any(Path(scrolls).iterdir())


def test_a_refused_turn_touches_neither_scroll_nor_db(db, counts):
    before = counts()
    with pytest.raises(Invalid, match="signature is required"):
        commit_turn(conversation="c", user="u", assistant="a", signature=" ")
    with pytest.raises(Invalid, match="no time zone"):
        commit_turn(conversation="c", user="u", assistant="a", referent_time="2024-01-01T10:00")
    assert counts() == before
    assert not (scroll_dir() / "c.jsonl").exists()


def test_verify_scroll_finds_an_edited_record(db):
    commit_turn(conversation="c", user="I owe Ana 20 euros", assistant="Noted.")
    assert verify_scroll("c")["ok"]
    path = scroll_dir() / "c.jsonl"
    path.write_text(path.read_text().replace("20 euros", "2 euros"))
    report = verify_scroll("c")
    assert not report["ok"]
    assert any("does not match its hash" in p for p in report["problems"])


def test_a_torn_line_is_reported_and_the_next_record_starts_clean(db):
    commit_turn(conversation="c", user="one", assistant="1")
    with (scroll_dir() / "c.jsonl").open("a") as f:
        f.write('{"seq": 2, "us')
    commit_turn(conversation="c", user="two", assistant="2")
    report = verify_scroll("c")
    assert report["records"] == 2
    assert any("not a JSON record" in p for p in report["problems"])
    assert _lines_ok("c")[-1]["seq"] == 2


def _lines_ok(conversation):
    out = []
    for line in (scroll_dir() / f"{conversation}.jsonl").open():
        if line.startswith('{"seq') and line.endswith("}\n"):
            out.append(json.loads(line))
    return out


def _big_scroll(conversation="long") -> int:
    for i in range(12):
        commit_turn(conversation=conversation, user=f"question {i} " + "x" * 900, assistant="ok")
    size = (scroll_dir() / f"{conversation}.jsonl").stat().st_size
    assert size > READ_LIMIT
    return size


def test_tail_and_slice_reads_are_bounded(db):
    size = _big_scroll()
    assert len(read_tail("long")) == READ_LIMIT
    assert read_tail("long", max_bytes=10) == (scroll_dir() / "long.jsonl").read_bytes()[-10:]
    assert read_slice("long", offset=0, length=5) == b'{"seq'
    assert size > READ_LIMIT


def test_it_refuses_a_whole_scroll_read(db):
    size = _big_scroll()
    with pytest.raises(TooLarge):
        read_scroll("long")
    with pytest.raises(TooLarge):
        read_slice("long", offset=0, length=size)
    with pytest.raises(TooLarge):
        read_tail("long", max_bytes=size)


def test_it_refuses_adjacent_slices_that_rebuild_more_than_the_limit(db):
    _big_scroll()
    assert len(b"".join(read_slices("long", [(0, 4096), (4096, 4096)]))) == READ_LIMIT
    with pytest.raises(TooLarge, match="together cover"):
        read_slices("long", [(0, 4096), (4096, 4096), (8192, 10)])


def test_overlapping_slices_count_once(db):
    _big_scroll()
    assert len(read_slices("long", [(0, 8000), (100, 8000)])) == 2


def test_it_refuses_bad_ranges_and_unknown_scrolls(db):
    _big_scroll()
    with pytest.raises(Invalid):
        read_slice("long", offset=-1, length=10)
    with pytest.raises(Invalid):
        read_slice("long", offset=0, length=None)
    with pytest.raises(NotFound):
        read_tail("nobody")


def test_the_pair_is_unreviewed_and_carries_the_conversation(db):
    from memory.trust import trust_of

    pair = commit_turn(conversation="c", user="u", assistant="a").node
    assert trust_of(pair.pk) == Trust.UNREVIEWED
    assert pair.metadata == {"conversation": "c", "seq": 1}


_CHILD = (
    CHILD_PRELUDE
    + """
from memory.scroll import commit_turn
for i in range(10):
    commit_turn(conversation="race", user=f"{sys.argv[2]} {i}", assistant="ok")
print("done")
"""
)


def test_two_processes_appending_never_interleave(real_db, tmp_path):
    outputs = run_together(_CHILD, [["a"], ["b"]], db=real_db, tmp_path=tmp_path)
    assert outputs == ["done", "done"]
    assert [r["seq"] for r in _lines("race")] == list(range(1, 21))
    assert verify_scroll("race")["ok"]
    pairs = Node.objects.filter(kind="pair").order_by("scroll_offset")
    assert pairs.count() == 20
    # Each pair responds to the one before it on the scroll, across both writers.
    ids = list(pairs.values_list("pk", flat=True))
    assert all(
        Edge.objects.filter(from_node_id=b, to_node_id=a, kind="responds_to").exists()
        for a, b in itertools.pairwise(ids)
    )


def test_slices_exactly_at_the_limit_pass_and_one_byte_more_is_refused(db):
    for i in range(200):
        commit_turn(conversation="long", user=f"question {i} " * 10, assistant="answer " * 10)
    half = READ_LIMIT // 2
    assert len(b"".join(read_slices("long", [(0, half), (half, half)]))) == READ_LIMIT
    with pytest.raises(TooLarge):
        read_slices("long", [(0, half), (half, half + 1)])


def _three_turns() -> list[str]:
    for n in ("one", "two", "three"):
        commit_turn(conversation="c", user=n, assistant=n.upper())
    assert verify_scroll("c")["ok"]
    return (scroll_dir() / "c.jsonl").read_text().splitlines(keepends=True)


def _write(lines: list[str]) -> list[str]:
    (scroll_dir() / "c.jsonl").write_text("".join(lines))
    return verify_scroll("c")["problems"]


def test_verify_scroll_reports_a_line_taken_out_as_a_gap_in_the_sequence(db):
    first, _, third = _three_turns()
    assert f"offset {len(first)}: seq 3, expected 2" in _write([first, third])


def test_verify_scroll_reports_two_lines_swapped(db):
    first, second, third = _three_turns()
    problems = _write([first, third, second])
    assert f"offset {len(first)}: seq 3, expected 2" in problems


def test_verify_scroll_reports_a_renumbered_line_whose_hash_was_recomputed(db):
    first, second, third = _three_turns()
    record = {**json.loads(second), "seq": 7}
    record["sha256"] = record_hash(record)
    problems = _write([first, json.dumps(record) + "\n", third])
    assert not any("does not match its hash" in p for p in problems)
    assert f"offset {len(first)}: seq 7, expected 2" in problems
