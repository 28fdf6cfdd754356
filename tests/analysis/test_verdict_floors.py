"""A loader-bound level's figure is a floor on its server's (verdicts.read_floors): by hand,
through the analysis of a run, and by simulation (a server capped by its loader below, level
with or above the other stack is never called slower or equivalent; a real lead that the cap
leaves ahead is still found)."""

import dataclasses

import numpy as np
from verdict_simulation import Scenario, _evidence, synthetic

from stackbench.analysis.analysis import compare_figures
from stackbench.analysis.stats import Estimate
from stackbench.analysis.verdicts import (
    FASTER_LOADER,
    LOADER_FLOOR,
    GateOutcome,
    Outcome,
    Verdict,
    assumed_spread,
    compare,
    gate,
    read_floors,
    series_evidence,
)

# a's figure over b's for each outcome (an undecided one with a ahead: 1.3)
RATIO = {
    Outcome.FASTER: 2.0,
    Outcome.SLOWER: 0.5,
    Outcome.EQUIVALENT: 1.0,
    Outcome.WITHIN_THRESHOLD: 1.01,
    Outcome.UNDECIDED: 1.3,
}


def _verdict(outcome: Outcome, ratio: float | None = None) -> Verdict:
    a = series_evidence(np.full(10, 1000.0) + np.arange(10))
    b = series_evidence(np.full(10, 500.0) + np.arange(10))
    return dataclasses.replace(
        compare(a, b), outcome=outcome, ratio=ratio or RATIO[outcome], repetitions_needed=4
    )


def test_a_floor_ahead_stands_and_behind_or_level_says_nothing() -> None:
    for outcome in Outcome:
        assert read_floors(_verdict(outcome), False, False) == _verdict(outcome)
    assert read_floors(_verdict(Outcome.FASTER), True, False).outcome is Outcome.FASTER
    assert read_floors(_verdict(Outcome.SLOWER), False, True).outcome is Outcome.SLOWER
    # ahead but undecided: more repetitions may show it ahead, so it keeps what decides it
    ahead = read_floors(_verdict(Outcome.UNDECIDED), True, False)
    assert ahead.outcome is Outcome.UNDECIDED and ahead.repetitions_needed == 4
    behind = [_verdict(Outcome.UNDECIDED, 0.8), _verdict(Outcome.SLOWER)]
    behind += [_verdict(Outcome.EQUIVALENT), _verdict(Outcome.WITHIN_THRESHOLD)]
    for verdict in behind:
        judged = read_floors(verdict, True, False)
        assert judged.outcome is Outcome.UNDECIDED
        assert judged.decide == LOADER_FLOOR and FASTER_LOADER in LOADER_FLOOR
        assert judged.repetitions_needed is None  # more of the same placement: the loader again
        assert (judged.ratio, judged.low, judged.high) == (verdict.ratio, verdict.low, verdict.high)
        assert judged.floors == (True, False)
    assert read_floors(_verdict(Outcome.FASTER), False, True).outcome is Outcome.UNDECIDED
    for outcome in (Outcome.FASTER, Outcome.SLOWER):  # two floors: neither server is known
        assert read_floors(_verdict(outcome), True, True).outcome is Outcome.UNDECIDED
    # no interval (a side without evidence yet): its own reason, which a repetition answers
    bare = dataclasses.replace(_verdict(Outcome.UNDECIDED, 0.8), se=None, decide="no evidence")
    assert read_floors(bare, True, False).decide == "no evidence"


def test_the_analysis_reads_a_loader_bound_estimate_as_a_floor() -> None:
    a = series_evidence(np.full(10, 500.0) + np.arange(10))
    b = series_evidence(np.full(10, 1000.0) + np.arange(10))
    assert a is not None and b is not None
    slow = Estimate(a.value, None, None, 10, a)
    fast = Estimate(b.value, None, None, 10, b)
    assert compare_figures(slow, fast, assumed_spread()).outcome is Outcome.SLOWER
    capped = dataclasses.replace(slow, floor=True)
    judged = compare_figures(capped, fast, assumed_spread())
    assert judged.outcome is Outcome.UNDECIDED and judged.decide == LOADER_FLOOR
    assert compare_figures(fast, capped, assumed_spread()).outcome is Outcome.UNDECIDED
    assert compare_figures(
        dataclasses.replace(fast, floor=True), slow, assumed_spread()
    ).outcome is (Outcome.FASTER)


def _outcomes(truth: float, cap: float, trials: int, seed: int) -> dict[Outcome, int]:
    """a's server truly `truth` x b's, measured at most `cap` x b's (the loader's limit), so
    its level is loader-bound whenever the cap binds; one repetition a side, 5% spread."""
    scenario = Scenario(1.0, 0.05, assumed_spread(), synthetic(0.03, 0.5))
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(Outcome, 0)
    for _ in range(trials):
        a, b = _evidence(rng, scenario, min(truth, cap)), _evidence(rng, scenario, 1.0)
        verdict = read_floors(compare(a, b, spread=scenario.spread), truth > cap, False)
        counts[verdict.outcome] += 1
    return counts


def test_a_capped_server_is_never_called_slower_or_level_by_simulation() -> None:
    """The server equal to b (A/A) or 1.5x b, the loader capping it at 0.8x or 1.0x b: read
    two-sided, the cap names it slower or equivalent in most trials (a false verdict about
    the server); read as a floor, never (500 trials each)."""
    for truth, cap in ((1.0, 0.8), (1.5, 0.8), (1.5, 1.0)):
        scenario = Scenario(1.0, 0.05, assumed_spread(), synthetic(0.03, 0.5))
        rng = np.random.default_rng(7)
        two_sided = sum(
            compare(
                _evidence(rng, scenario, min(truth, cap)),
                _evidence(rng, scenario, 1.0),
                spread=scenario.spread,
            ).outcome
            in (Outcome.SLOWER, Outcome.EQUIVALENT)
            for _ in range(500)
        )
        counts = _outcomes(truth, cap, 500, seed=7)
        assert counts[Outcome.SLOWER] == counts[Outcome.EQUIVALENT] == 0, (truth, cap, counts)
        assert counts[Outcome.WITHIN_THRESHOLD] == 0, (truth, cap, counts)
        if cap < 1.0:
            assert two_sided > 250, (truth, cap, two_sided)


def test_a_lead_the_cap_leaves_ahead_is_still_found_by_simulation() -> None:
    """The server 2x b, capped at 1.6x: the floor is ahead by 60%, far past the 5% spread, so
    one repetition a side names it faster in nearly every trial."""
    counts = _outcomes(2.0, 1.6, 500, seed=11)
    assert counts[Outcome.FASTER] >= 475, counts
    assert counts[Outcome.SLOWER] == 0, counts


def test_a_gate_reads_a_floor_one_sided() -> None:
    """Candidate a 20% below baseline b (regressed past a 5% limit) and 20% above (cleared):
    a loader-bound candidate cannot show a regression, a loader-bound baseline cannot show
    its absence; what the floor does show stands."""
    base = series_evidence(np.full(10, 1000.0) + np.arange(10))
    low = series_evidence(np.full(10, 800.0) + np.arange(10))
    high = series_evidence(np.full(10, 1200.0) + np.arange(10))
    worse, better = compare(low, base), compare(high, base)

    def outcome(v: Verdict, a_floor: bool, b_floor: bool) -> GateOutcome:
        return gate([read_floors(v, a_floor, b_floor)], 0.05)[0].outcome

    assert outcome(worse, False, False) is GateOutcome.REGRESSED
    assert outcome(worse, True, False) is GateOutcome.UNDECIDED
    assert outcome(worse, False, True) is GateOutcome.REGRESSED
    assert outcome(better, False, False) is GateOutcome.CLEARED
    assert outcome(better, True, False) is GateOutcome.CLEARED
    assert outcome(better, False, True) is GateOutcome.UNDECIDED
