"""The agreement cell's judgement in loadgen/bench/bench.py, against hand-computed cases: the
gap, the direction count, and the verdict (agree, not shown, disagree)."""

import importlib.util
from pathlib import Path

SPEC = importlib.util.spec_from_file_location(
    "bench", Path(__file__).resolve().parent.parent / "bench" / "bench.py"
)
assert SPEC and SPEC.loader
bench = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench)


def rows_of(uring: list[float], epoll: list[float]) -> dict:
    return {
        (0.5, "uring"): [{"p50": v} for v in uring],
        (0.5, "epoll"): [{"p50": v} for v in epoll],
    }


def test_gap_is_a_share_of_the_larger() -> None:
    assert bench.gap(9.0, 10.0) == 0.1
    assert bench.gap(10.0, 9.0) == 0.1
    assert bench.gap(0.0, 0.0) == 0.0


def test_figure_gap_takes_the_medians_the_round_range_and_the_direction() -> None:
    # medians 4 and 5: 20%; rounds 1/2 (50%), 4/5 (20%), 6/5 (1/6); uring higher once.
    rows = rows_of([1.0, 4.0, 6.0], [2.0, 5.0, 5.0])
    whole, lo, hi, above = bench.figure_gap(rows, 0.5, "uring", "epoll", "p50")
    assert (whole, lo, hi, above) == (0.2, 1 / 6, 0.5, 1)


def test_agreement_needs_the_gap_and_the_floor_under_ten_percent() -> None:
    assert bench.agreement_verdict(0.05, [0.04, 0.08], 3, 7).startswith("agree")
    assert "not shown" in bench.agreement_verdict(0.05, [0.14, 0.02], 3, 7)


def test_a_gap_inside_the_floor_is_not_shown() -> None:
    assert bench.agreement_verdict(0.14, [0.15, 0.11], 1, 7).startswith("not shown")


def test_a_disagreement_needs_a_direction() -> None:
    # Over 10% and over the floor: named only when uring is on one side in every round.
    assert bench.agreement_verdict(0.5, [0.04, 0.49], 2, 7).startswith("not shown")
    assert bench.agreement_verdict(0.5, [0.04, 0.2], 6, 7).startswith("not shown")
    assert bench.agreement_verdict(0.5, [0.04, 0.2], 7, 7).startswith("DISAGREE")
    assert bench.agreement_verdict(0.5, [0.04, 0.2], 0, 7).startswith("DISAGREE")


def test_without_a_floor_only_the_goal_is_judged() -> None:
    assert bench.agreement_verdict(0.05, [], 0, 1).startswith("within 10% (no A/A floor")
    assert bench.agreement_verdict(0.5, [], 0, 1).startswith("OUTSIDE 10% (no A/A floor")


def test_the_best_round_view_takes_each_loaders_lowest_round() -> None:
    # lowest 1 and 2: 50%, whichever rounds they came from.
    rows = rows_of([1.0, 4.0, 6.0], [5.0, 2.0, 5.0])
    assert bench.figure_gap(rows, 0.5, "uring", "epoll", "p50", min)[0] == 0.5


def test_the_best_round_needs_no_direction_to_disagree() -> None:
    assert bench.agreement_verdict(0.5, [0.04, 0.2], None, 7).startswith("DISAGREE")
    assert bench.agreement_verdict(0.05, [0.04, 0.08], None, 7).startswith("agree")
