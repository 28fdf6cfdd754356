"""A case's history: change points over runs checked by simulation (false alarms on unchanged
series, power on known steps), and each run judged against the run before by the verdicts."""

import math

import numpy as np
import pytest

from stackbench.analysis.history import MIN_RUNS_FOR_CHANGES, change_points, series_sigma

SIGMA = 0.05  # the run-to-run spread the series are drawn with and judged by
SERIES = 300


def _series(rng: np.random.Generator, n: int, step_at: int | None = None, step: float = 1.0):
    logs = rng.normal(0.0, SIGMA, n)
    if step_at is not None:
        logs[step_at:] += math.log(step)
    return list(np.exp(logs) * 10_000)


@pytest.mark.parametrize("runs", [5, 10, 20, 40])
def test_unchanged_series_raise_few_false_alarms(runs) -> None:
    rng = np.random.default_rng(runs)
    alarms = sum(bool(change_points(_series(rng, runs), SIGMA)) for _ in range(SERIES))
    assert alarms / SERIES <= 0.03  # simulated at <= 0.5%; the bound leaves room for the draw


@pytest.mark.parametrize(("step", "power"), [(1.2, 0.9), (0.8, 0.9), (1.1, 0.2)])
def test_a_step_is_found_where_it_happened(step, power) -> None:
    """A step of 4σ (±20%) or 2σ (+10%) after run 10 of 20: a change point within one run of
    where it happened (simulated: 96% for 4σ, about a third for 2σ)."""
    rng = np.random.default_rng(7)
    found = 0
    for _ in range(SERIES):
        found += any(abs(c - 10) <= 1 for c in change_points(_series(rng, 20, 10, step), SIGMA))
    assert found / SERIES >= power


def test_too_short_or_spreadless_series_have_no_change_points() -> None:
    assert change_points([1.0, 1.0, 2.0][: MIN_RUNS_FOR_CHANGES - 1], SIGMA) == []
    assert change_points([1.0, 1.0, 2.0, 2.0], 0.0) == []
    assert change_points([1.0, 1.0, 2.0, 2.0, 2.0], SIGMA) == [2]  # doubling: a step at run 3


def test_a_machine_noisier_than_assumed_raises_few_false_alarms() -> None:
    """Runs spread by 15% judged with an assumed 5%: the series' own spread sets the bar."""
    rng = np.random.default_rng(3)
    noisy = [list(np.exp(rng.normal(0.0, 0.15, 12))) for _ in range(SERIES)]
    alarms = sum(bool(change_points(series, SIGMA)) for series in noisy)
    assert alarms / SERIES <= 0.08  # simulated at about 5%


def test_the_series_own_spread_is_robust_to_one_step() -> None:
    logs = np.log(np.array([100.0, 101, 99, 100, 150, 151, 149, 150]))
    assert series_sigma(logs) < 0.02  # the 40% step moves one difference of seven


def test_each_run_of_a_case_is_judged_against_the_run_before(tmp_path) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
    from synthetic_run import fill

    from stackbench.analysis.analysis import analyse
    from stackbench.analysis.history import histories
    from stackbench.store.store import Store

    store = Store(tmp_path / "s.sqlite")
    runs = [fill(store, seed) for seed in (1, 2, 3)]
    analyses = [analyse(store.load_run(r)) for r in runs]
    store.close()
    found = histories(analyses, [{"node": "abc123"}] * 3, stack="node", workload="hello")
    assert found and {h.key.stack for h in found} == {"node"}
    for h in found:
        assert [p.run_id for p in h.points] == runs
        assert h.points[0].against_previous is None
        assert all(p.against_previous is not None for p in h.points[1:])
        assert {p.revision for p in h.points} == {"abc123"}
        second = h.points[1]
        assert second.against_previous is not None
        ratio = second.throughput.value / h.points[0].throughput.value
        assert second.against_previous.ratio == pytest.approx(ratio)
