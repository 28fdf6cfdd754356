"""run --until-decided: which levels to repeat, most decisions per second first."""

import pytest
from synthetic_series import flat

from stackbench.analysis.analysis import Analysis, analyse, decision_confidence
from stackbench.analysis.undecided import undecided
from stackbench.config.plan import LevelKey
from stackbench.store.records import CaseRecord
from stackbench.store.store import RunData, Store
from tests.analysis.test_levelsteady import row
from tests.analysis.test_ranking import analysed
from tests.store.test_store import run_record


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


def _one_level_each(series: dict[str, list[float] | None], rps: dict[str, float]) -> Analysis:
    """One repetition of one level per stack: its per-second series (None: the load tool gave
    none, as wrk and ab) and its whole-level rate."""
    store = Store(":memory:")
    run = store.start_run(run_record())
    for stack in series:
        store.add_case(
            CaseRecord(
                run_id=run, stack=stack, workload="hello", label="hello", path="/hello", params={}
            )
        )
    data = store.load_run(run)
    levels = [row(series[c.stack], requests_per_s=rps[c.stack], case_id=c.id) for c in data.cases]
    return analyse(RunData(data.run, data.cases, levels, []))


def test_a_side_without_evidence_gets_another_repetition() -> None:
    """Issue #31: go at about 1.35x node, undecided only because node's one level has no
    steady window, so no evidence. A repetition gives it some (repetitions make an interval):
    it is decidable, not 'too close to the threshold'. (Node's series is 3 s: a steady window
    needs 5.)"""
    a = _one_level_each(
        {"go": list(flat(30, 0.01, seed=1, level=13_500)), "node": [10_000.0] * 3},
        {"go": 13_500.0, "node": 10_000.0},
    )
    (ranking,) = a.workloads[0].rankings
    verdict = ranking.entries[1].vs_best
    assert verdict is not None and verdict.se is None  # undecided for want of evidence
    assert ranking.entries[1].throughput.evidence is None
    found = undecided(a)
    assert found.decidable == {LevelKey("go", "hello", 25.0): 1, LevelKey("node", "hello", 25.0): 1}
    assert found.hopeless == 0
