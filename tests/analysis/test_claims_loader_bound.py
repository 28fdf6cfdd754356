"""A loader-bound level measured the loader: its throughput is a floor on the server's (read
as a one-sided bound, like a level disturbed in every repetition), and what that floor cannot
decide leaves the claim untestable on this placement, since every repetition on it is the
loader's again (analysis.claims.decisions._judge_bounded)."""

import random

import numpy as np

from stackbench.analysis.claims import ClaimStatus, undecided_claims
from stackbench.analysis.claims.decisions import LOADER_LIMIT
from stackbench.analysis.verdicts import FASTER_LOADER
from tests.analysis.test_claims import (
    SCATTER_SPANS,
    RunBuilder,
    calm_then_wild,
    level,
    make_claim,
    one,
    ratio_test,
)

LOADER_BOUND = ("loader-bound",)
NEAR_ONE = {"article": 1.0, "tolerance": 0.10}  # 0.91-1.10x


def _bound_a(a: float | list[float], b: float | list[float]) -> RunBuilder:
    """a at `a`, every repetition loader-bound; b at `b`, the server the limit."""
    run = RunBuilder()
    run.curve("a", "w", {25: a}, flags=LOADER_BOUND)
    run.curve("b", "w", {25: b})
    return run


def test_a_loader_bound_numerator_is_a_floor_that_confirms_or_refutes() -> None:
    """a / b = 2x with a loader-bound: a faster loader could only show a faster still."""
    greater = one(make_claim(ratio_test("greater")), _bound_a(200.0, 100.0))
    assert greater.status is ClaimStatus.CONFIRMED, greater.why
    assert "a w @25: loader-bound, which can only have slowed it" in greater.why
    assert "so the ratio is at least 1.9" in greater.why
    near = one(make_claim(ratio_test("near", **NEAR_ONE)), _bound_a(200.0, 100.0))
    assert near.status is ClaimStatus.REFUTED, near.why
    assert "outside 0.91–1.10×" in near.why


def test_a_floor_cannot_show_a_ceiling_so_the_claim_is_untestable_here() -> None:
    """a / b = 2x against "at most 10x" (confirmed read two-sided) and 0.5x against "a < b":
    a faster loader might show a above either bound, and no repetition here would; the
    claim is untestable on this placement, says why and what tests it, and is not chased."""
    for test, a in ((ratio_test("less", threshold=10.0), 200.0), (ratio_test("less"), 50.0)):
        result = one(make_claim(test), _bound_a(a, 100.0))
        assert result.status is ClaimStatus.UNTESTABLE, result.why
        assert f"but at a w @25 {LOADER_LIMIT}; {FASTER_LOADER}" in result.why
        assert undecided_claims([result]) == ()


def test_both_sides_loader_bound_or_a_metric_without_direction_is_untestable() -> None:
    run = RunBuilder()
    run.curve("a", "w", {25: 200.0}, flags=LOADER_BOUND)
    run.curve("b", "w", {25: 100.0}, flags=LOADER_BOUND)
    assert one(make_claim(ratio_test("greater")), run).status is ClaimStatus.UNTESTABLE
    p99 = one(make_claim(ratio_test("greater", metric="p99")), _bound_a(200.0, 100.0))
    assert p99.status is ClaimStatus.UNTESTABLE, p99.why


def test_a_peak_among_loader_bound_levels_is_a_floor() -> None:
    """The last level over the peak: with the peak's curve loader-bound anywhere, the true
    peak may lie higher, so "keeps at least 85% of its peak" cannot be confirmed (both sides
    are the loader's), while the same run read without the flag confirms it."""
    test = {
        "kind": "ratio",
        "metric": "requests_per_s",
        "expect": "greater",
        "threshold": 0.85,
        "workloads": ["w"],
        "numerator": {"stack": "a", "level": 400},
        "denominator": {"stack": "a", "level": "peak"},
    }
    curve = {100: 1000.0, 200: 1100.0, 300: 1050.0, 400: 1000.0}
    quiet = RunBuilder()
    quiet.curve("a", "w", curve)
    assert one(make_claim(test), quiet).status is ClaimStatus.CONFIRMED
    bound = RunBuilder()
    bound.curve("a", "w", curve, flags=LOADER_BOUND)
    result = one(make_claim(test), bound)
    assert result.status is ClaimStatus.UNTESTABLE, result.why
    assert "a w peak @200" in result.why and LOADER_LIMIT in result.why


def test_a_jitter_span_with_a_loader_bound_level_is_untestable() -> None:
    test = SCATTER_SPANS
    calm, wild = calm_then_wild(random.Random(5))
    run = RunBuilder()
    cid = run.case("apache", "w")  # the calm span loader-bound, the wild one not
    for i, (x, rps) in enumerate(calm.items()):
        run.levels.append(level(cid, x, rps, 0, flags=LOADER_BOUND, index=i))
    for i, (x, rps) in enumerate(wild.items(), start=len(calm)):
        run.levels.append(level(cid, x, rps, 0, index=i))
    result = one(make_claim(test), run)
    assert result.status is ClaimStatus.UNTESTABLE, result.why
    assert "apache w 100–2,000 jitter" in result.why and LOADER_LIMIT in result.why


def _capped_rates(true_ratio: float, seeds: int) -> tuple[float, float]:
    """Refuted and confirmed shares of "a ≈ b (±10%)" over `seeds` runs: 4 fresh starts a
    side scattered by 5% around b = 1,000 and a = true_ratio x 1,000, every one of a's
    loader-bound: the loader's limit caps it at 75-100% of what it would serve."""
    rng = np.random.default_rng(11)
    claim = make_claim(ratio_test("near", **NEAR_ONE))
    refuted = confirmed = 0
    for _ in range(seeds):
        a = true_ratio * 1000.0 * np.exp(rng.normal(0.0, 0.05, 4)) * rng.uniform(0.75, 1.0, 4)
        b = 1000.0 * np.exp(rng.normal(0.0, 0.05, 4))
        run = RunBuilder(calibrated=0.05)
        run.curve("a", "w", {25: [float(x) for x in a]}, flags=LOADER_BOUND)
        run.curve("b", "w", {25: [float(x) for x in b]})
        status = one(claim, run).status
        refuted += status is ClaimStatus.REFUTED
        confirmed += status is ClaimStatus.CONFIRMED
    return refuted / seeds, confirmed / seeds


def test_the_floor_refutes_falsely_at_most_at_the_verdicts_rate_and_finds_a_real_gap() -> None:
    """At the band's upper edge (1.10x, the worst case for a floor) the floor refutes no more
    often than a two-sided interval errs on one side (≤ 4% of 200 draws) and never confirms;
    a real 1.5x, read through the loader's cap, is refuted in most runs."""
    false_refuted, confirmed = _capped_rates(1.10, 200)
    assert false_refuted <= 0.04 and confirmed == 0.0
    power, _ = _capped_rates(1.5, 100)
    assert power >= 0.5
