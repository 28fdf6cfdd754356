"""run --settle's advice: the analysis of a first level's warm-up as the engine reads it."""

import numpy as np

from stackbench.commands.settle import settle_advice
from tests.analysis.synthetic_series import flat, ramp_then_plateau


def test_a_steady_level_asks_for_nothing():
    advice = settle_advice(flat(30, 0.01, seed=1).tolist())
    assert advice.shown and advice.more_s == 0


def test_a_warmup_shown_steady_after_it_asks_for_nothing():
    # 40 s with a 20-s climb: steady, and shown, from 20 s: the level's figures are sound
    series = ramp_then_plateau(40, 20, 0.01, seed=2, start=10 / 46, level=46_000)
    assert settle_advice(series.tolist()).shown


def test_a_level_settling_at_20_s_asks_for_about_20_s_more():
    # 30 s, 3% noise: the window found is not shown steady; from 20 s on it is
    short = ramp_then_plateau(30, 20, 0.03, seed=3, start=10 / 46, level=46_000)
    advice = settle_advice(short.tolist())
    assert not advice.shown and advice.more_s == 20
    assert "a warm-up about 20 s longer" in advice.why


def test_a_level_climbing_throughout_asks_for_an_unknown_amount():
    climb = np.linspace(10_683, 46_326, 25).tolist()
    advice = settle_advice(climb)
    assert not advice.shown and advice.more_s is None
    assert advice.why.startswith("did not settle within the 25-s level")
