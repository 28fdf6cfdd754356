"""Whether a run calibrates the machine first (config/calibrate_first.py)."""

import pytest

from stackbench.config.calibrate_first import calibrate_first


def test_an_article_suite_on_an_uncalibrated_machine_calibrates_first():
    choice = calibrate_first(True, None, no_calibrate=False, resumed=False, multi_host=False)
    assert choice.run_first and "--no-calibrate" in choice.why


@pytest.mark.parametrize(
    ("article", "calibrated_on", "no_calibrate", "resumed", "multi_host", "said"),
    [
        (False, None, False, False, False, ""),  # no claims to decide: nothing to say
        (True, "2026-11-25", False, False, False, "measured 2026-11-25"),
        (True, None, True, False, False, "--no-calibrate"),
        (True, None, False, True, False, "resumed run keeps its plan"),
        (True, None, False, False, True, "another host"),
    ],
)
def test_otherwise_it_does_not_and_says_why(
    article, calibrated_on, no_calibrate, resumed, multi_host, said
):
    choice = calibrate_first(article, calibrated_on, no_calibrate, resumed, multi_host)
    assert not choice.run_first
    assert said in choice.why if said else choice.why == ""
