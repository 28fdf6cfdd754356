"""A level where a stack answered nothing and every request waited out the timeout is read as
a bound (analysis/claims/censored.py): its latency lies above the timeout. An order claim
can then be decided at that level by the other stack's interval, in the one direction the
bound allows, where it used to make the whole claim untestable (php-apache at 6,250
connections in concurrency-sweep, 2026-11-27)."""

import dataclasses
import math

import msgspec
import pytest

from stackbench.analysis.claims import ClaimStatus, evaluate
from tests.analysis.test_claims import RunBuilder, level, make_claim, one

TIMEOUT_MS = 3000.0  # the test run's timeout_s (tests.analysis.test_claims.settings)


def _order(stacks: list[str], levels: list[float]) -> dict[str, object]:
    """The first stack's time per request above the second's at every level."""
    return {
        "kind": "order",
        "metric": "time_per_request",
        "workloads": ["w"],
        "levels": levels,
        "stacks": stacks,
    }


def _stack(
    run: RunBuilder, stack: str, rps: dict[float, float], stalled: dict[float, dict[str, int]]
) -> None:
    """A stack answering `rps` at its levels (10-s levels: 10 x rps answers) and nothing at
    the `stalled` ones, whose failures are the given classes."""
    cid = run.case(stack, "w")
    for value, r in rps.items():
        run.levels.append(level(cid, value, r, completed=round(r * 10.0)))
    for value, errors in stalled.items():
        run.levels.append(level(cid, value, 0.0, errors=errors, completed=0))


def test_a_stalled_slower_side_holds_its_order_by_the_bound() -> None:
    """a is expected slower: at 200 it answered nothing (every request timed out), b answers
    in 50 ms there (200 connections x 10 s / 40,000 answers): a's time per request is above
    3 s, so a / b is at least 60x, wholly within >= 1."""
    run = RunBuilder()
    _stack(run, "a", {100: 100.0}, {200: {"timeout": 1200}})
    _stack(run, "b", {100: 1000.0, 200: 4000.0}, {})
    result = one(make_claim(_order(["a", "b"], [100, 200])), run)
    assert result.status is ClaimStatus.CONFIRMED, result.why
    bound = next(m for m in result.ours if m.label == "a w @200 (no answer: above)")
    assert bound.value == TIMEOUT_MS and bound.unit == "ms" and bound.low is None
    ratio = next(m for m in result.ours if m.label == "a / b on w @200 (at least)")
    assert ratio.value == pytest.approx(TIMEOUT_MS / (200 * 10.0 * 1000.0 / 40_000), rel=1e-3)
    assert ratio.low is not None and 1.0 < ratio.low < ratio.value


def test_a_stalled_faster_side_refutes_the_order() -> None:
    """b is expected faster but answered nothing at 200 while a answered in 50 ms: b's time
    per request is above 3 s, a's ratio to it at most 1/60: refuted, naming the stall."""
    run = RunBuilder()
    _stack(run, "a", {200: 4000.0}, {})
    _stack(run, "b", {}, {200: {"timeout": 1200}})
    result = one(make_claim(_order(["a", "b"], [200])), run)
    assert result.status is ClaimStatus.REFUTED, result.why
    assert "b w @200 answered no request (all 1,200 waited out the 3,000 ms timeout)" in result.why
    assert "so the ratio is at most 0.02×" in result.why


def test_a_bound_that_points_the_other_way_decides_nothing() -> None:
    """a is expected slower and stalled, but b's own time per request is 33 s (a level of
    5,000 connections answering 150 a second): a's figure, above 3 s, may lie above or below
    b's. The bound cannot decide it; a run in which a answers there could."""
    run = RunBuilder()
    _stack(run, "a", {}, {5000: {"timeout": 20_000}})
    _stack(run, "b", {5000: 150.0}, {})
    result = one(make_claim(_order(["a", "b"], [5000])), run)
    assert result.status is ClaimStatus.UNDECIDED, result.why
    assert "the stalled side's figure is only known to exceed the timeout" in result.why
    (want,) = result.to_decide
    assert want.levels == () and "a run in which the stalled level answers" in want.why


@pytest.mark.parametrize(
    ("errors", "why"),
    [
        ({"refused": 1200}, "no request completed"),  # refused at once: no bound on latency
        ({"timeout": 1100, "reset": 100}, "no request completed"),
        # nothing attempted: too little measured to read, let alone bound
        ({}, "only 0 requests measured; the claim needs at least 1,000 per level"),
    ],
)
def test_a_level_without_answers_that_did_not_all_time_out_stays_untestable(
    errors: dict[str, int], why: str
) -> None:
    run = RunBuilder()
    _stack(run, "a", {}, {200: errors})
    _stack(run, "b", {200: 4000.0}, {})
    result = one(make_claim(_order(["a", "b"], [200])), run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why == f"a w @200: {why}"


def test_two_stalled_sides_compare_nothing() -> None:
    run = RunBuilder()
    _stack(run, "a", {}, {200: {"timeout": 1200}})
    _stack(run, "b", {}, {200: {"timeout": 1200}})
    result = one(make_claim(_order(["a", "b"], [200])), run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why.startswith("a / b on w @200: both answered nothing")


def test_a_stall_is_no_figure_for_a_claim_on_a_curve() -> None:
    """A scatter around a trend (or a shape) needs the level's figure, not a bound: the claim
    stays untestable, and its reason says what the level did."""
    run = RunBuilder()
    _stack(run, "a", {float(c): 100.0 for c in range(100, 1000, 100)}, {1000: {"timeout": 3000}})
    scatter = {
        "kind": "scatter",
        "metric": "mean_latency",
        "workload": "w",
        "numerator": {"stack": "a", "from_level": 500, "to_level": 1000},
        "denominator": {"stack": "a", "from_level": 100, "to_level": 400},
        "threshold": 1.5,
    }
    result = one(make_claim(scatter), run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why == (
        "a w @1,000 answered no request (all 3,000 waited out the 3,000 ms timeout); a curve "
        "through the levels has no figure there"
    )


def test_the_bound_is_the_runs_own_timeout() -> None:
    """Not a constant: a 30-s timeout bounds at 30,000 ms, and b at 50 ms is then 600x below."""
    run = RunBuilder()
    _stack(run, "a", {}, {200: {"timeout": 1200}})
    _stack(run, "b", {200: 4000.0}, {})
    data = run.data()
    settings = msgspec.structs.replace(data.run.settings, timeout_s=30.0)
    longer = dataclasses.replace(data, run=msgspec.structs.replace(data.run, settings=settings))
    (result,) = evaluate([make_claim(_order(["a", "b"], [200]))], longer, run.facts())
    assert result.status is ClaimStatus.CONFIRMED, result.why
    ratio = next(m for m in result.ours if m.label.endswith("(at least)"))
    assert math.isclose(ratio.value or 0.0, 30_000.0 / 50.0, rel_tol=1e-3)
