"""The machine's run-to-run spread from a calibration's starts, by hand."""

import math

import msgspec
import numpy as np
import pytest
from scipy import stats as scipy_stats

from stackbench.analysis.calibration import (
    MIN_SPREAD,
    drift_warning,
    estimate_spread,
    spread_of,
    undisturbed_starts,
)
from stackbench.errors import EnvironmentProblem, ExitCode
from stackbench.store.records import CalibrationRow, LevelFlag, LevelRow
from tests.engine.test_outcome import case, level, run_data


def test_the_spread_is_beyond_the_windows_noise_and_verdicts_use_its_upper_bound():
    figures = [100.0, 103.0, 98.0, 101.0, 99.0, 102.0]
    within = [1e-5] * 6
    est = estimate_spread(figures, within)
    between = float(np.var(np.log(figures), ddof=1))
    assert est.sigma == pytest.approx(math.sqrt(between - 1e-5))
    upper = between * 5 / scipy_stats.chi2.ppf(0.2, 5)  # one-sided 80% bound, 5 df
    assert est.sigma_used == pytest.approx(math.sqrt(upper - 1e-5))
    assert est.sigma_used > est.sigma and est.starts == 6


def test_a_quiet_calibration_is_floored_and_too_few_starts_refused():
    assert estimate_spread([100.0, 100.0, 100.0], [0.0] * 3).sigma_used == MIN_SPREAD
    with pytest.raises(ValueError, match="at least 3 starts"):
        estimate_spread([100.0, 101.0], [])


def test_starts_that_trend_one_way_are_called_a_changing_machine():
    falling = [63_023.0, 48_761.0, 35_041.0, 34_937.0, 29_512.0, 32_762.0]  # measured here
    assert "fell steadily" in (drift_warning(falling) or "")
    assert drift_warning([63_000.0, 61_000.0, 64_000.0, 62_500.0, 63_500.0, 62_000.0]) is None


def test_an_uncalibrated_machine_is_assumed_and_says_so():
    assert spread_of(None).assumed and spread_of(None).sigma == 0.05
    row = CalibrationRow(
        id=1,
        machine="m",
        at=0.0,
        run_id=3,
        stack="go-nethttp",
        workload="hello",
        level_value=50.0,
        figures=(1.0, 1.0, 1.0),
        within_variance=0.0,
        sigma=0.02,
        sigma_used=0.03,
    )
    spread = spread_of(row)
    assert not spread.assumed and spread.sigma == 0.03
    assert "3 fresh starts of go-nethttp hello @50, measured 2.0%" in spread.source


def _starts(disturbed: int, clean: int) -> list[LevelRow]:
    flag = LevelFlag.DISTURBED.detail("the hypervisor stole 3.8% of core 1 (loader)")
    rows = [level(1) for _ in range(disturbed + clean)]
    return [
        msgspec.structs.replace(r, id=i, repetition=i, flags=[flag] if i < disturbed else [])
        for i, r in enumerate(rows)
    ]


def test_a_calibration_keeps_no_disturbed_start_and_refuses_when_too_few_are_left():
    kept = undisturbed_starts(run_data([case(1, "ok")], _starts(disturbed=2, clean=4)))
    assert [r.repetition for r in kept] == [2, 3, 4, 5]
    # every start disturbed (by the host-speed rule of the time, 2026-11-27 23:30 here):
    # no spread is stored, with what to do, as the machine's state (exit 3)
    with pytest.raises(EnvironmentProblem, match="6 of its 6 starts were disturbed") as err:
        undisturbed_starts(run_data([case(1, "ok")], _starts(disturbed=6, clean=0)))
    assert err.value.exit_code == ExitCode.ENVIRONMENT and "when the machine is quiet" in str(
        err.value
    )
    with pytest.raises(EnvironmentProblem, match="leaves 2 of the 3"):
        undisturbed_starts(run_data([case(1, "ok")], _starts(disturbed=4, clean=2)))
