"""The spread between fresh starts of a suite's earlier runs (analysis/pastspread.py), against
values computed by hand."""

import math

import pytest

from stackbench.analysis.pastspread import LevelSpread, PastSpreads, past_spreads, upper_sigma
from stackbench.config.estimate import PastLevel

SETUP = "native/closed/keepalive-off"
# chi2.ppf(0.2, 2): a chi-square of 2 degrees of freedom is exponential with mean 2, so its
# 20% quantile is -2 ln 0.8
CHI2_20_2 = -2.0 * math.log(0.8)


def _past(level: float, rps: float, run: int, rep: int = 0, **kw: object) -> PastLevel:
    fields: dict[str, object] = {"suite": "sweep", "setup": SETUP, "at": float(run)}
    fields.update(kw)
    return PastLevel(
        "s",
        "w",
        str(fields["setup"]),
        level,
        rps,
        float(str(fields["at"])),
        str(fields["suite"]),
        run,
        rep,
    )


# Level 100: three starts 100, 110, 121 (logs a step of ln 1.1 apart: squares 2 (ln 1.1)^2,
# 2 degrees of freedom); 200: two equal starts (0, 1); 220: 220 and 242 ((ln 1.1)^2 / 2, 1);
# 1,000: far from the others.
LEVELS = [
    _past(100, 100.0, 1),
    _past(100, 110.0, 2),
    _past(100, 121.0, 3),
    _past(200, 200.0, 1),
    _past(200, 200.0, 2),
    _past(220, 220.0, 1),
    _past(220, 242.0, 2),
    _past(1000, 1000.0, 1),
    _past(1000, 500.0, 2),
]
STEP = math.log(1.1)


def test_the_spread_at_a_level_is_its_starts_log_sd() -> None:
    spread = past_spreads(LEVELS, "sweep", SETUP).at("s", "w", 100)
    assert spread is not None
    assert spread.df == 2 and spread.runs == (1, 2, 3) and spread.low == spread.high == 100
    assert spread.sigma == pytest.approx(STEP)
    # the 80% upper bound: sqrt(2 (ln 1.1)^2 / chi2.ppf(0.2, 2)) = 0.20177
    assert spread.sigma_used == pytest.approx(math.sqrt(2 * STEP**2 / CHI2_20_2))
    assert spread.sigma_used == pytest.approx(0.20177, abs=1e-5)


def test_the_levels_of_a_range_are_pooled() -> None:
    """At 200 the range is 160-250: 200 (squares 0, 1 df) and 220 ((ln 1.1)^2 / 2, 1 df):
    sqrt(((ln 1.1)^2 / 2) / 2) = ln 1.1 / 2."""
    spread = past_spreads(LEVELS, "sweep", SETUP).at("s", "w", 200)
    assert spread is not None
    assert (spread.low, spread.high, spread.df) == (200, 220, 2)
    assert spread.sigma == pytest.approx(STEP / 2)
    assert "s w @200–220" in spread.text and "runs 1, 2" in spread.text


def test_too_few_starts_give_no_spread() -> None:
    spreads = past_spreads(LEVELS, "sweep", SETUP)
    assert spreads.at("s", "w", 160) is None  # only 200 in 128-200: one degree of freedom
    assert spreads.at("s", "w", 5000) is None  # no stored level near
    assert spreads.at("other", "w", 100) is None
    one_run = past_spreads([p for p in LEVELS if p.run_id == 1], "sweep", SETUP)
    assert one_run.at("s", "w", 100) is None  # one start a level: no spread between starts


def test_only_the_suites_own_starts_in_its_setup_count() -> None:
    other = [
        _past(100, 10.0, 4, suite="quick"),
        _past(100, 10.0, 5, setup="native/closed/keepalive-on"),
    ]
    spread = past_spreads(LEVELS + other, "sweep", SETUP).at("s", "w", 100)
    assert spread is not None and spread.runs == (1, 2, 3)
    # each repetition of a run is a start of its own; a start measured again keeps its latest
    again = [_past(100, 100.0, 1, 1, at=1.0), _past(100, 999.0, 1, 1, at=0.5)]
    spread = past_spreads(LEVELS + again, "sweep", SETUP).at("s", "w", 100)
    assert spread is not None and spread.df == 3


def test_the_upper_bound_is_floored() -> None:
    assert upper_sigma(0.0, 2) == 0.01
    assert upper_sigma(2 * STEP**2, 2) == pytest.approx(0.20177, abs=1e-5)


def test_the_peak_is_where_the_starts_trend_peaks() -> None:
    arch = [_past(v, r, run) for run in (1, 2) for v, r in ((1, 1.0), (2, 2.0), (3, 5.0))]
    arch += [_past(v, r, run) for run in (1, 2) for v, r in ((4, 2.0), (5, 1.0))]
    assert past_spreads(arch, "sweep", SETUP).peak("s", "w") == 3
    assert PastSpreads("sweep", {}).peak("s", "w") is None


def test_a_spread_names_where_it_comes_from() -> None:
    one = LevelSpread("php-apache", "data?n=128", 8000, 10000, 0.738, 1.031, 6, (2, 3, 4))
    assert one.text == (
        "103.1% between fresh starts of php-apache data?n=128 @8,000–10,000 (runs 2, 3, 4: "
        "73.8% over 6 degrees of freedom, 80% upper bound)"
    )


def test_a_pair_of_levels_varies_by_its_per_start_log_ratio() -> None:
    """Run 1's three starts: a / b = 1, e^0.1, e^0.2 while both sides drift together from
    100 to 150; run 2's one start: e^0.1. The four log ratios 0, 0.1, 0.2, 0.1 about their
    mean 0.1: squares 0.02, 3 df; sqrt(0.02 / 3), its 80% upper bound sqrt(0.02 /
    chi2.ppf(0.2, 3)), chi2.ppf(0.2, 3) = 1.005174."""
    drift = {0: 100.0, 1: 125.0, 2: 150.0}
    pairs = [_past(1, drift[rep] * math.exp(d), 1, rep) for rep, d in enumerate((0.0, 0.1, 0.2))]
    pairs += [_past(2, drift[rep], 1, rep) for rep in range(3)]
    pairs += [_past(1, 100.0 * math.exp(0.1), 2), _past(2, 100.0, 2)]
    pairs.append(_past(1, 80.0, 3))  # a start that measured only one of them
    spreads = past_spreads(pairs, "sweep", SETUP)
    found = spreads.paired(("s", "w", 1.0), ("s", "w", 2.0))
    assert found is not None and found.df == 3 and found.runs == (1, 2)
    assert found.sigma == pytest.approx(math.sqrt(0.02 / 3))
    assert found.sigma_used == pytest.approx(math.sqrt(0.02 / 1.005174), rel=1e-5)
    assert found.text == (
        "14.1% between the pairs s w @1 / s w @2 of one start (runs 1, 2: 8.2% over 3 "
        "degrees of freedom, 80% upper bound)"
    )
    assert spreads.paired(("s", "w", 1.0), ("s", "w", 9.0)) is None  # never measured
    # run 2 alone: one start that measured both, no spread
    two = past_spreads([p for p in pairs if p.run_id != 1], "sweep", SETUP)
    assert two.paired(("s", "w", 1.0), ("s", "w", 2.0)) is None
