"""Claims read from paired repetitions (analysis.paired): two levels of one fresh start, two
stacks' standalone timings taken in turns; the design check reads its synthetic runs so too."""

import math
from typing import Any

from stackbench.analysis.claims import ClaimStatus, evaluate
from tests.analysis.test_claims import RESAMPLES, RunBuilder, level, make_claim, script_row

DRIFT = [1.0, 1.25, 0.8, 1.1, 0.9, 1.2]  # each repetition's machine, shared by its levels
JITTER = [0.005, -0.005, 0.005, -0.005, 0.005, -0.005]

FLAT = {
    "kind": "shape",
    "metric": "requests_per_s",
    "stacks": ["php"],
    "workloads": ["w"],
    "from_level": 20,
    "to_level": 200,
    "expect": "flat",
    "tolerance": 0.1,
}


def statuses(run: RunBuilder, test: dict[str, Any], **facts: Any) -> tuple[ClaimStatus, ...]:
    claim = make_claim(test)
    return tuple(
        evaluate([claim], run.data(), run.facts(**facts), resamples=RESAMPLES, paired=p)[0].status
        for p in (True, False)
    )


def test_two_levels_of_one_fresh_start_pair_and_their_drift_cancels():
    """@200 is 0.95 x @20 in every repetition (±0.5%) while the repetitions drift by ±25%:
    paired, the spread 1.05 lies well inside 1.10; as independent sides it does not show."""
    run = RunBuilder()
    cid = run.case("php", "w")
    for rep, (drift, j) in enumerate(zip(DRIFT, JITTER, strict=True)):
        run.levels.append(level(cid, 20, round(1000 * drift), rep))
        run.levels.append(level(cid, 200, round(950 * drift * math.exp(j)), rep))
    assert statuses(run, FLAT) == (ClaimStatus.CONFIRMED, ClaimStatus.UNDECIDED)


def test_proportional_pairs_are_per_connection():
    test = {**FLAT, "metric": "time_per_request", "expect": "proportional", "tolerance": 0.2}
    run = RunBuilder()
    cid = run.case("php", "w")
    for rep, drift in enumerate(DRIFT):
        run.levels.append(level(cid, 20, round(1000 * drift), rep))
        run.levels.append(level(cid, 200, round(980 * drift), rep))
    (result,) = evaluate([make_claim(test)], run.data(), run.facts(), resamples=RESAMPLES)
    assert result.status is ClaimStatus.CONFIRMED
    assert result.ours[-1].value is not None and result.ours[-1].value < 1.05


def test_standalone_timings_taken_in_turns_pair_by_their_order():
    """The k-th timing of node with the k-th of php: node 2x php in each turn (±0.5%) while
    the turns drift by ±25%."""
    test = {
        "kind": "ratio",
        "metric": "script_wall",
        "expect": "near",
        "article": 1.84,
        "tolerance": 0.1,
        "workloads": ["db-report"],
        "numerator": {"stack": "node"},
        "denominator": {"stack": "php"},
    }
    run = RunBuilder()
    run.case("node", "db-report")
    run.case("php", "db-report")
    for drift, j in zip(DRIFT, JITTER, strict=True):
        wall = 0.9 * drift
        run.scripts.append(script_row("php", "db-report", 1000, wall, wall, 0.0, "ok"))
        node = 2.0 * wall * math.exp(j)
        run.scripts.append(script_row("node", "db-report", 1000, node, node, 0.0, "ok"))
    # 2.0 lies within 1.67-2.02 by 1%: paired, the 0.5% jitter decides it
    assert statuses(run, test, script_iterations=1000) == (
        ClaimStatus.CONFIRMED,
        ClaimStatus.UNDECIDED,
    )


def test_a_level_whose_repetition_numbers_repeat_is_not_paired():
    run = RunBuilder()
    cid = run.case("php", "w")
    for rep, drift in enumerate(DRIFT):
        run.levels.append(level(cid, 20, round(1000 * drift), rep % 3))
        run.levels.append(level(cid, 200, round(950 * drift), rep))
    paired, unpaired = statuses(run, FLAT)
    assert paired is unpaired is ClaimStatus.UNDECIDED


P80_GROWS = {
    "kind": "ratio",
    "metric": "p80",
    "numerator": {"stack": "php", "level": 200},
    "denominator": {"stack": "php", "level": 20},
    "expect": "near",
    "article": 2.0,
    "tolerance": 0.1,
    "workloads": ["w0"],
}
# Each repetition's own share of a level's p80 (log units): with the pattern of the rounds
# below, a pair's log ratios are 2 x 0.046, 0, 0, -2 x 0.046 off (SD 0.075)
PAIR_NOISE = [0.046, -0.046, 0.046, -0.046]


def test_a_latency_ratio_borrows_from_the_run_s_pairs_of_its_metric_and_kind():
    """p80 at 200 clients over 20, in 8 workloads of one stack measured in the same 4 fresh
    starts (drifting by ±25%): each pair's log ratios ln 2 + (0.092, 0, 0, -0.092) in some
    order, SD 0.075, so its own t(3) interval, 2.0 x/÷ e^(3.18 x 0.075 / 2) = 1.13, is wider
    than the claim's band (2.0 x/÷ 1.1) and decides nothing; moderated by the run's 8 pairs
    of two levels (analysis.paired: d0 = 8 x 3 = 24) it is x/÷ 1.09: confirmed.
    With only the claim's workload measured there are no pairs to borrow from."""
    run, alone = RunBuilder(), RunBuilder()
    for w in range(8):
        for builder in (run, alone) if w == 0 else (run,):
            cid = builder.case("php", f"w{w}")
            for rep, (drift, j) in enumerate(zip(DRIFT[:4], PAIR_NOISE, strict=True)):
                own = j if w % 2 == 0 else -j
                p80 = 10.0 * drift
                builder.levels.append(level(cid, 20, 1000, rep, latency_ms={"p80": p80}))
                grown = 2.0 * p80 * math.exp(own + (0.046 if rep < 2 else -0.046))
                builder.levels.append(level(cid, 200, 1000, rep, latency_ms={"p80": grown}))
    assert statuses(run, P80_GROWS)[0] is ClaimStatus.CONFIRMED
    assert statuses(alone, P80_GROWS)[0] is ClaimStatus.UNDECIDED
