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
