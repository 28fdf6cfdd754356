"""Capacity per core, cores for a target and cost per million requests, against values
computed by hand."""

import pytest

from stackbench.analysis.capacity import (
    Capacity,
    CapacityAsk,
    Span,
    bracket_of,
    capacity_of,
    cores_needed,
    cost_per_million,
    inverted_words,
    per_core_words,
    planning_capacity,
    ratio_span,
    scaling_note,
    scalings,
    span_words,
)
from stackbench.config.slo import Probe
from stackbench.errors import InputError

SEARCH = [(1000.0, True), (2000.0, True), (4000.0, False), (3000.0, True), (3500.0, False)]


def test_bracket_is_highest_held_and_lowest_failed_above_divided_by_cores():
    cap = capacity_of("go", "hello", SEARCH, server_cores=2)
    assert cap is not None
    assert (cap.sustained_rps, cap.failed_rps) == (3000.0, 3500.0)
    assert cap.per_core == Span(1500.0, 1750.0)
    assert (cap.probes, cap.repetitions) == (5, 1)
    assert span_words(cap.per_core) == "1,500–1,750"


def test_a_probe_holds_only_when_every_repetition_held():
    held = [(1000.0, True)] * 3 + [(2000.0, True), (2000.0, True), (2000.0, False)]
    assert bracket_of(held) == (Probe(1000.0, True), Probe(2000.0, False))
    cap = capacity_of("node", "json", held, server_cores=1)
    assert cap is not None
    assert cap.rps == Span(1000.0, 2000.0)
    assert (cap.repetitions, cap.held_at_failed) == (3, 2)
    assert per_core_words(cap) == (
        "1,000–2,000 req/s per core (2 of 3 repetitions held at the upper end)"
    )


def test_without_a_failed_rate_above_it_is_a_lower_bound_only():
    # the failure at 1000 is below a held rate: noise, as in the search
    cap = capacity_of("go", "hello", [(1000.0, False), (2000.0, True)], server_cores=1)
    assert cap is not None
    assert cap.per_core == Span(2000.0, None)
    assert span_words(cap.per_core) == "at least 2,000"
    # "at least 2,000 req/s a core" -> "at most 50 cores" for 100,000 req/s
    assert cores_needed(cap, 100_000) == Span(None, 50.0)
    assert inverted_words(cores_needed(cap, 100_000), "{:.1f}") == "at most 50.0"


def test_when_the_lowest_rate_failed_only_an_upper_end_is_known():
    cap = capacity_of("php", "hello", [(1000.0, False), (1000.0, False)], server_cores=1)
    assert cap is not None
    assert cap.per_core == Span(None, 1000.0)
    assert span_words(cap.per_core) == "below 1,000"
    assert inverted_words(cores_needed(cap, 100_000), "{:.0f}") == "more than 100"


def test_no_outcome_no_capacity():
    assert capacity_of("go", "hello", [], server_cores=1) is None
    with pytest.raises(ValueError):
        capacity_of("go", "hello", SEARCH, server_cores=0)


def test_cores_for_a_target_swap_the_ends():
    cap = capacity_of("go", "hello", SEARCH, server_cores=2)
    assert cap is not None
    need = cores_needed(cap, 100_000)
    # 100,000 / 1,750 = 57.142857..., 100,000 / 1,500 = 66.666...
    assert need.low == pytest.approx(57.142857, rel=1e-6)
    assert need.high == pytest.approx(66.666667, rel=1e-6)
    assert inverted_words(need, "{:.1f}") == "57.1–66.7"


def test_cost_per_million_requests():
    cap = capacity_of("go", "hello", SEARCH, server_cores=2)
    assert cap is not None
    cost = cost_per_million(cap, 0.04)
    # 0.04 $/core-hour buys 3600 s x 1,750 req/s = 6.3 M requests at best: 0.0063492 $/M;
    # at 1,500 req/s 5.4 M: 0.0074074 $/M
    assert cost.low == pytest.approx(0.0063492, rel=1e-4)
    assert cost.high == pytest.approx(0.0074074, rel=1e-4)


def test_ask_rejects_non_positive_values():
    assert not CapacityAsk().asked
    assert CapacityAsk(target_rps=100_000).asked
    with pytest.raises(InputError, match="--target-rps"):
        CapacityAsk(target_rps=0)
    with pytest.raises(InputError, match="--price-per-core-hour"):
        CapacityAsk(price_per_core_hour=-1)


def test_scaling_note_names_the_core_count():
    assert scaling_note(1).startswith("measured on 1 server core only: assumes")
    assert scaling_note(4).startswith("measured on 4 server cores only")


def test_caveats_name_only_the_brackets_ends():
    cap = capacity_of(
        "go", "hello", SEARCH, 2, disturbed={1000.0, 3500.0}, loader_bound={3500.0, 4000.0}
    )
    assert cap is not None
    assert cap.caveats == (
        "the loader could not offer 3,500 req/s: the upper end may be the loader's limit, "
        "not the server's",
        "disturbed at 3,500 req/s (other processes used the level's cores)",
    )
    clean = capacity_of("go", "hello", SEARCH, 2, disturbed={1000.0}, loader_bound={4000.0})
    assert clean is not None and clean.caveats == ()


# --- scaling over core counts: brackets by hand -----------------------------------------------
def _cap(stack: str, cores: int, held: float, failed: float | None) -> Capacity:
    outcomes = [(held, True)] + ([] if failed is None else [(failed, False)])
    cap = capacity_of(stack, "hello", outcomes, server_cores=cores)
    assert cap is not None
    return cap


def test_scaling_ratio_pairs_opposite_ends_of_the_two_brackets():
    one, two = _cap("go", 1, 1000.0, 1250.0), _cap("go", 2, 1800.0, 2000.0)
    (scaling,) = scalings([one, two])
    assert (scaling.base, scaling.largest) == (one, two)
    # lowest: 1,800 / 1,250 = 1.44; highest: 2,000 / 1,000 = 2.0
    assert scaling.ratio(two) == Span(1.44, 2.0)
    # per core against linear (2 cores: ratio / 2): 0.72 to 1.0
    assert scaling.efficiency(two) == Span(0.72, 1.0)
    assert scaling.ratio(one) == Span(0.8, 1.25)  # the base against itself: 1000/1250, 1250/1000


def test_an_open_end_leaves_that_end_of_the_ratio_open():
    # 1 core "at least 1,000": no upper end, so the ratio has no lower end
    assert ratio_span(Span(1800.0, 2000.0), Span(1000.0, None)) == Span(None, 2.0)
    # 2 cores "at least 1,800": the ratio has no upper end
    assert ratio_span(Span(1800.0, None), Span(1000.0, 1250.0)) == Span(1.44, None)
    # nothing held on 1 core: no upper end either
    assert ratio_span(Span(1800.0, 2000.0), Span(None, 500.0)) == Span(3.6, None)


def test_scalings_group_by_stack_and_workload_and_need_two_counts():
    go1, go2 = _cap("go", 1, 1000.0, 1250.0), _cap("go", 2, 1800.0, 2000.0)
    node1 = _cap("node", 1, 900.0, 1000.0)
    got = scalings([go2, node1, go1])
    assert [(s.stack, [c.server_cores for c in s.points]) for s in got] == [("go", [1, 2])]


def test_cores_for_a_target_plan_from_the_largest_count_measured():
    go1, go2 = _cap("go", 1, 1000.0, 1250.0), _cap("go", 2, 1800.0, 2000.0)
    assert planning_capacity([go1, go2], go1) is go2
    # 2 cores held 1,800, failed 2,000: 900–1,000 a core; 100,000 req/s -> 100–111.1 cores
    need = cores_needed(planning_capacity([go1, go2], go1), 100_000)
    assert need.low == pytest.approx(100.0)
    assert need.high == pytest.approx(111.111111, rel=1e-6)
    assert "measured on 2 server cores, the most of the 2" in scaling_note(2, counts=2)
