"""Capacity per core, cores for a target and cost per million requests, against values
computed by hand."""

import pytest

from stackbench.analysis.capacity import (
    CapacityAsk,
    Span,
    bracket_of,
    capacity_of,
    cores_needed,
    cost_per_million,
    inverted_words,
    per_core_words,
    scaling_note,
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
