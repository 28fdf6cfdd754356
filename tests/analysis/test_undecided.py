"""run --until-decided: which levels to repeat, most decisions per second first."""

import pytest
from synthetic_series import flat

from stackbench.analysis.analysis import decision_confidence
from stackbench.analysis.undecided import LevelKey, Undecided, next_round, undecided
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


def test_next_round_takes_the_most_decisions_per_second_within_the_budget() -> None:
    found = Undecided(
        {LevelKey("a", "w", 1.0): 3, LevelKey("b", "w", 1.0): 1, LevelKey("c", "w", 1.0): 2}, 0
    )
    seconds = {"a": 30.0, "b": 5.0, "c": 10.0}

    def cost(k: LevelKey) -> float:
        return seconds[k.stack]

    # per second: c 0.2, b 0.2 (tie: by key), a 0.1
    assert next_round(found, cost, 100.0) == [
        LevelKey("b", "w", 1.0),
        LevelKey("c", "w", 1.0),
        LevelKey("a", "w", 1.0),
    ]
    assert next_round(found, cost, 16.0) == [LevelKey("b", "w", 1.0), LevelKey("c", "w", 1.0)]
    assert next_round(found, cost, 4.0) == []


def test_each_look_spends_an_equal_share_of_alpha() -> None:
    assert decision_confidence(1) == pytest.approx(0.95)
    assert decision_confidence(6) == pytest.approx(1 - 0.05 / 6)
