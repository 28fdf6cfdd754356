"""run --until-decided: which levels to repeat, most decisions per second first."""

import pytest
from synthetic_series import flat

from stackbench.analysis.analysis import decision_confidence
from stackbench.analysis.undecided import undecided
from stackbench.config.plan import LevelKey
from tests.analysis.test_ranking import analysed


def test_levels_of_undecided_comparisons_are_counted_and_hopeless_ones_left_out() -> None:
    # go 12% above node: undecided on one repetition at the assumed 5% spread, and decidable
    a = analysed(
        {
            "go": [list(flat(30, 0.01, seed=1, level=11_200))],
            "node": [list(flat(30, 0.01, seed=2, level=10_000))],
            "php": [list(flat(30, 0.01, seed=3, level=1_000))],
        }
    )
    found = undecided(a)
    assert found.decidable == {LevelKey("go", "hello", 25.0): 1, LevelKey("node", "hello", 25.0): 1}
    assert found.hopeless == 0 and not found.done
    same = analysed({"a": [list(flat(30, 0.01, seed=4))], "b": [list(flat(30, 0.01, seed=5))]})
    assert undecided(same).hopeless == 1  # at the threshold: more measurement will not decide


def test_each_look_spends_an_equal_share_of_alpha() -> None:
    assert decision_confidence(1) == pytest.approx(0.95)
    assert decision_confidence(6) == pytest.approx(1 - 0.05 / 6)
