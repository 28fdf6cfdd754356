"""No winner on noise: rankings claim "faster" only on a significant difference."""

import msgspec

from stackbench.analysis.analysis import Analysis, analyse
from stackbench.analysis.findings import findings
from stackbench.analysis.stats import Verdict
from stackbench.store.records import CaseRecord, LevelRow
from stackbench.store.store import RunData, Store
from tests.analysis.synthetic_series import flat
from tests.analysis.test_levelsteady import row
from tests.store.test_store import run_record


def analysed(levels_by_stack: dict[str, list[list[float]]]) -> Analysis:
    """One workload, one level; per stack the per-second series of each repetition."""
    store = Store(":memory:")
    run = store.start_run(run_record())
    for stack in levels_by_stack:
        store.add_case(CaseRecord(run_id=run, stack=stack, workload="hello", label="hello",
                                  path="/hello", params={}))
    data = store.load_run(run)
    levels: list[LevelRow] = []
    for case in data.cases:
        for rep, rps in enumerate(levels_by_stack[case.stack]):
            levels.append(row(rps, repetition=rep, requests_per_s=sum(rps) / len(rps),
                              case_id=case.id))
    return analyse(RunData(data.run, data.cases, levels, []))


def test_one_repetition_twenty_percent_apart_is_significant_from_the_windows() -> None:
    a = analysed({"fast": [list(flat(40, 0.01, seed=1, level=12_000))],
                  "slow": [list(flat(40, 0.01, seed=2, level=10_000))]})
    top = a.workloads[0].rankings[0].entries[0]
    assert top.stack == "fast" and top.vs_next is not None
    assert top.vs_next.verdict is Verdict.FASTER
    assert top.difference is not None and top.difference.unit == "batches"
    text = " ".join(f.text for f in findings(a))
    assert "fast" in text and " > (1.20×" in text


def test_same_level_is_no_significant_difference_with_its_ratio() -> None:
    a = analysed({"a": [list(flat(40, 0.02, seed=3))], "b": [list(flat(40, 0.02, seed=4))]})
    top = a.workloads[0].rankings[0].entries[0]
    assert top.vs_next is not None
    assert top.vs_next.verdict is Verdict.NO_SIGNIFICANT_DIFFERENCE
    text = " ".join(f.text for f in findings(a))
    assert "≈ (no significant difference: ratio" in text and " > (" not in text


def test_two_repetitions_cannot_name_a_winner_and_say_why() -> None:
    a = analysed({"fast": [list(flat(20, 0.01, seed=s, level=20_000)) for s in (1, 2)],
                  "slow": [list(flat(20, 0.01, seed=s, level=10_000)) for s in (3, 4)]})
    top = a.workloads[0].rankings[0].entries[0]
    assert top.vs_next is not None and top.vs_next.verdict is not Verdict.FASTER
    text = " ".join(f.text for f in findings(a))
    assert "more repetitions are needed" in text


def test_holm_adjusts_every_level_of_a_workload_together() -> None:
    store = Store(":memory:")
    run = store.start_run(run_record())
    for stack in ("fast", "slow"):
        store.add_case(CaseRecord(run_id=run, stack=stack, workload="hello", label="hello",
                                  path="/hello", params={}))
    data = store.load_run(run)
    levels = []
    for case in data.cases:
        base = 12_000 if case.stack == "fast" else 10_000
        for index, value in enumerate((25.0, 50.0)):
            rps = list(flat(40, 0.01, seed=index + len(case.stack), level=base))
            levels.append(msgspec.structs.replace(
                row(rps, requests_per_s=sum(rps) / 40, case_id=case.id),
                level_index=index, level_value=value))
    a = analyse(RunData(data.run, data.cases, levels, []))
    diffs = [r.entries[0].difference for r in a.workloads[0].rankings]
    assert len(diffs) == 2 and all(d is not None for d in diffs)
    # Two tests in the family: Holm multiplies the smaller raw p by 2.
    smaller = min(diffs, key=lambda d: d.p_raw or 1.0)  # type: ignore[union-attr]
    assert smaller is not None and smaller.p_raw is not None and smaller.p_value is not None
    assert smaller.p_value == min(1.0, 2 * smaller.p_raw)
