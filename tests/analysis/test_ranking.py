"""Rankings: every stack gets a verdict against the best (and the stack above it)."""

import msgspec
import pytest

from stackbench.analysis.analysis import Analysis, analyse
from stackbench.analysis.findings import findings, ranking_text
from stackbench.analysis.verdicts import Outcome
from stackbench.store.records import CaseRecord, LevelFlag, LevelRow
from stackbench.store.store import RunData, Store
from tests.analysis.synthetic_series import flat
from tests.analysis.test_levelsteady import row
from tests.store.test_store import run_record


def hello_run(*stacks: str) -> RunData:
    """A stored run with one case of the hello workload per stack, and no levels yet."""
    store = Store(":memory:")
    run = store.start_run(run_record())
    for stack in stacks:
        store.add_case(
            CaseRecord(
                run_id=run, stack=stack, workload="hello", label="hello", path="/hello", params={}
            )
        )
    return store.load_run(run)


def analysed(levels_by_stack: dict[str, list[list[float]]]) -> Analysis:
    """One workload, one level; per stack the per-second series of each repetition."""
    data = hello_run(*levels_by_stack)
    levels: list[LevelRow] = []
    for case in data.cases:
        for rep, rps in enumerate(levels_by_stack[case.stack]):
            levels.append(
                row(rps, repetition=rep, requests_per_s=sum(rps) / len(rps), case_id=case.id)
            )
    return analyse(RunData(data.run, data.cases, levels, []))


def test_one_repetition_twenty_percent_apart_is_decided_from_the_windows() -> None:
    a = analysed(
        {
            "fast": [list(flat(40, 0.01, seed=1, level=12_000))],
            "slow": [list(flat(40, 0.01, seed=2, level=10_000))],
        }
    )
    top, second = a.workloads[0].rankings[0].entries
    assert top.stack == "fast" and top.vs_best is None
    assert second.vs_best is not None and second.vs_best.outcome is Outcome.FASTER
    assert second.vs_best.unit == "seconds" and second.vs_best.spread is not None
    text = " ".join(f.text for f in findings(a))
    assert "fast is faster than slow: fast's req/s is 1.20× (95% " in text
    assert "run-to-run spread assumed 5%" in text


def test_two_copies_of_one_level_are_never_named_faster() -> None:
    a = analysed({"a": [list(flat(40, 0.02, seed=3))], "b": [list(flat(40, 0.02, seed=4))]})
    second = a.workloads[0].rankings[0].entries[1]
    assert second.vs_best is not None
    assert second.vs_best.outcome is Outcome.UNDECIDED  # the run-to-run spread is unknown
    text = " ".join(f.text for f in findings(a))
    assert "not enough evidence between a and b" in text and "repetitions a side" in text
    assert "no significant difference" not in text and "within noise" not in text


def test_every_stack_gets_a_verdict_against_the_best_and_the_one_above() -> None:
    a = analysed(
        {
            "go": [list(flat(30, 0.01, seed=5, level=40_000))],
            "node": [list(flat(30, 0.01, seed=6, level=20_000))],
            "php": [list(flat(30, 0.01, seed=7, level=5_000))],
        }
    )
    go, node, php = a.workloads[0].rankings[0].entries
    assert [e.stack for e in (go, node, php)] == ["go", "node", "php"]
    assert node.vs_best is not None and node.vs_above is None  # above it is the best
    assert php.vs_best is not None and php.vs_above is not None
    assert php.vs_above.ratio == pytest.approx(4.0, rel=0.02)
    assert all(v.outcome is Outcome.FASTER for v in (node.vs_best, php.vs_best, php.vs_above))
    text = ranking_text(a, a.workloads[0].rankings[0])
    assert text.startswith("at 25 connections: go ") and " > node " in text and " > php " in text
    assert "node is faster than php: node's req/s is 4.0" in text


def test_repetitions_are_the_unit_when_there_are_several() -> None:
    a = analysed(
        {
            "fast": [list(flat(20, 0.01, seed=s, level=20_000)) for s in (1, 2, 3)],
            "slow": [list(flat(20, 0.01, seed=s, level=10_000)) for s in (4, 5, 6)],
        }
    )
    second = a.workloads[0].rankings[0].entries[1]
    assert second.vs_best is not None
    assert second.vs_best.unit == "repetitions" and second.vs_best.n_a == 3
    assert second.vs_best.spread is None  # between-start spread is in the repetitions
    assert second.vs_best.outcome is Outcome.FASTER


def test_holm_adjusts_every_level_of_a_workload_together() -> None:
    data = hello_run("fast", "slow")
    levels = []
    for case in data.cases:
        base = 12_000 if case.stack == "fast" else 10_000
        for index, value in enumerate((25.0, 50.0)):
            rps = list(flat(40, 0.01, seed=index + len(case.stack), level=base))
            levels.append(
                msgspec.structs.replace(
                    row(rps, requests_per_s=sum(rps) / 40, case_id=case.id),
                    level_index=index,
                    level_value=value,
                )
            )
    a = analyse(RunData(data.run, data.cases, levels, []))
    verdicts = [r.entries[1].vs_best for r in a.workloads[0].rankings]
    assert len(verdicts) == 2 and all(v is not None for v in verdicts)
    # Two tests in the family: Holm multiplies the smaller raw p by 2.
    smaller = min(verdicts, key=lambda v: v.p_raw or 1.0)  # type: ignore[union-attr]
    assert smaller is not None and smaller.p_raw is not None and smaller.p_value is not None
    assert smaller.p_value == pytest.approx(min(1.0, 2 * smaller.p_raw))


def test_a_disturbed_level_decides_nothing() -> None:
    """A level during which other processes used the cores (the judge's `disturbed` flag)
    keeps its figures but no verdict rests on it: even 2x apart, not enough evidence."""
    data = hello_run("a", "b")
    levels = [
        msgspec.structs.replace(
            row(list(flat(30, 0.01, seed=i, level=level)), case_id=case.id),
            flags=(LevelFlag.DISTURBED.detail("other processes used 60% of a core"),)
            if case.stack == "b"
            else (),
        )
        for i, (case, level) in enumerate(zip(data.cases, (20_000, 10_000), strict=True))
    ]
    a = analyse(RunData(data.run, data.cases, levels, []))
    second = a.workloads[0].rankings[0].entries[1]
    assert second.vs_best is not None and second.vs_best.outcome is Outcome.UNDECIDED
    assert second.vs_best.ratio == pytest.approx(2.0, rel=0.05)
    assert "disturbed by other processes" in (second.vs_best.decide or "")


def test_a_repetition_still_disturbed_is_left_out_where_its_level_has_others() -> None:
    """As the claims read a level: of b's three repetitions the one still disturbed after its
    re-measure is left out, the 2x gap is decided on the other two (and a's three), and the
    level's aggregate says what was left out; the tables keep every repetition."""
    data = hello_run("a", "b")
    levels = []
    for case in data.cases:
        level = 20_000 if case.stack == "a" else 10_000
        for rep in range(3):
            series = list(flat(30, 0.01, seed=10 * rep + len(levels), level=level))
            flags = (
                (LevelFlag.DISTURBED.detail("other processes used 60% of a core"),)
                if case.stack == "b" and rep == 1
                else ()
            )
            levels.append(
                msgspec.structs.replace(
                    row(
                        series,
                        repetition=rep,
                        requests_per_s=sum(series) / len(series),
                        case_id=case.id,
                    ),
                    flags=flags,
                )
            )
    a = analyse(RunData(data.run, data.cases, levels, []))
    second = a.workloads[0].rankings[0].entries[1]
    assert second.stack == "b"
    assert second.vs_best is not None and second.vs_best.outcome is not Outcome.UNDECIDED
    b = next(c for c in a.workloads[0].cases if c.stack == "b")
    assert len(b.rows) == 3  # every repetition is still listed
    left = [f for f in b.aggregates[0].flags if f.kind is LevelFlag.LEFT_OUT]
    assert left and left[0].detail.startswith("1 of 3 repetitions")
    assert not any(f.kind is LevelFlag.DISTURBED for f in b.aggregates[0].flags)
