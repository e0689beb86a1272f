"""`python -m bench` at one size keeps the other sizes' rows of its section's first table."""

from __future__ import annotations

from bench.__main__ import BY_HAND, keep_by_hand, keep_other_sizes

OLD = "| n | a |\n|---|---|\n| 10,000 | 1 |\n| 100,000 | 2 |\n\nTrigram\n| 100,000 | T |\n"


def test_rows_of_sizes_not_measured_are_carried_in_size_order():
    new = keep_other_sizes(OLD, "| n | a |\n|---|---|\n| 1,000,000 | 3 |\n", [1_000_000])
    assert new.splitlines()[2:] == ["| 10,000 | 1 |", "| 100,000 | 2 |", "| 1,000,000 | 3 |"]


def test_a_later_table_led_by_sizes_is_not_merged_into_the_first():
    new = keep_other_sizes(OLD, "| n | a |\n|---|---|\n| 1,000,000 | 3 |\n", [1_000_000])
    assert "| 100,000 | T |" not in new


def test_the_text_written_by_hand_below_the_marker_is_kept():
    old = f"## Pages\n| 10,000 | 1 |\n\n{BY_HAND}\n**Machine.** Quiet.\n"
    new = keep_by_hand(old, "## Pages\n| 10,000 | 2 |\n")
    assert new == f"## Pages\n| 10,000 | 2 |\n\n{BY_HAND}\n**Machine.** Quiet.\n"


def test_a_part_without_the_marker_is_written_as_measured():
    assert keep_by_hand("## Pages\n| 10,000 | 1 |\n", "## Pages\n") == "## Pages\n"


def test_a_section_led_by_month_numbers_carries_no_old_rows():
    import bench.forgetting_bench as forgetting
    from bench.__main__ import section

    new = "| month | a |\n|---|---|\n| 1 | new |\n"
    assert section(forgetting, "| month | a |\n|---|---|\n| 1 | old |\n", new, [10_000]) == new
