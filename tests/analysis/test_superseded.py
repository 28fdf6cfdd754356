"""A level measured again after a disturbance keeps its first measurement in the store,
superseded; every reader of the analysis computes from the run as if that record were absent:
the aggregates and rankings, the claims, the history, a comparison of runs. Only the findings
gain one sentence per such measurement, saying the level was measured again and why.

Each test reads the same synthetic run twice: as stored, and with superseded measurements
added after it (`supersede_some`: far from every standing figure, and one of a level beyond the
sweep), so a reader that counted them would compute something else."""

from typing import Any

import pytest

from stackbench.analysis import fmt
from stackbench.analysis.analysis import Analysis, analyse
from stackbench.analysis.claims import ClaimResult, ClaimStatus, evaluate, facts_from_run
from stackbench.analysis.compare import compare_runs
from stackbench.analysis.findings import findings
from stackbench.analysis.history import histories
from stackbench.store.store import RunData, Store
from tests.analysis.test_claims import make_claim
from tests.report.synthetic_run import SUPERSEDED_WHY, fill, supersede_some

RESAMPLES = 200  # the same seed on both sides: equal inputs give equal intervals


@pytest.fixture(scope="module")
def runs() -> tuple[RunData, RunData, int]:
    """(the run as stored, the same run with superseded measurements, how many)."""
    plain, marked = Store(":memory:"), Store(":memory:")
    run = fill(plain)
    assert fill(marked) == run
    added = supersede_some(marked, run)
    return plain.load_run(run), marked.load_run(run), added


def _analyse(data: RunData) -> Analysis:
    return analyse(data, resamples=RESAMPLES)


def _computed(a: Analysis) -> str:
    """Everything the analysis derives per workload, as text (a NaN equals a NaN there)."""
    return repr(
        [
            (
                w.label,
                w.level_values,
                w.rankings,
                [(c.stack, c.aggregates, c.breakpoint, c.steady) for c in w.cases],
                [c.stack for c in w.not_measured],
            )
            for w in a.workloads
        ]
    )


def test_the_superseded_measurements_are_read_apart(runs: tuple[RunData, RunData, int]) -> None:
    plain, marked, added = runs
    assert marked.levels == plain.levels and plain.superseded == []
    assert len(marked.superseded) == added and all(not lv.stands for lv in marked.superseded)


def test_aggregates_and_rankings_are_those_of_the_run_without_them(
    runs: tuple[RunData, RunData, int],
) -> None:
    plain, marked, _ = runs
    assert _computed(_analyse(marked)) == _computed(_analyse(plain))


def test_findings_gain_one_sentence_per_superseded_measurement_and_nothing_else(
    runs: tuple[RunData, RunData, int],
) -> None:
    plain, marked, added = runs
    before, after = findings(_analyse(plain)), findings(_analyse(marked))
    assert [f for f in after if f in before] == before
    extra = [f for f in after if f not in before]
    assert len(extra) == added and all(f.severity == "info" for f in extra)
    stack_of = {c.id: c.stack for c in marked.cases}
    first = next(lv for lv in marked.superseded if lv.superseded and lv.superseded.by)
    label = next(c.label for c in marked.cases if c.id == first.case_id)
    said = (
        f"{stack_of[first.case_id]} at 25 connections, repetition 1: measured again: the "
        f"first measurement ({fmt.rate(first.requests_per_s)} req/s) was disturbed: "
        f"{SUPERSEDED_WHY}"
    )
    assert any(f.workload == label and f.text == said for f in extra), extra
    beyond = next(lv for lv in marked.superseded if lv.superseded and lv.superseded.by is None)
    (stopped,) = [f.text for f in extra if "measured again:" not in f.text]
    assert stopped == (
        f"{stack_of[beyond.case_id]} at 1000 connections, repetition 1: the first "
        f"measurement ({fmt.rate(beyond.requests_per_s)} req/s) was disturbed: "
        f"{SUPERSEDED_WHY}; the run stopped before measuring it again"
    )


CLAIMS: list[dict[str, Any]] = [
    {
        "kind": "order",
        "metric": "requests_per_s",
        "workloads": ["hello"],
        "levels": [25],
        "stacks": ["go-nethttp", "node", "php-fpm-nginx"],
    },
    {
        "kind": "ratio",
        "metric": "requests_per_s",
        "expect": "greater",
        "workloads": ["hello"],
        "numerator": {"stack": "go-nethttp", "level": "peak"},
        "denominator": {"stack": "node", "level": "peak"},
    },
]


def test_claims_read_the_run_as_without_them(runs: tuple[RunData, RunData, int]) -> None:
    plain, marked, _ = runs
    claims = [make_claim(c) for c in CLAIMS]

    def judged(data: RunData) -> tuple[ClaimResult, ...]:
        return evaluate(claims, data, facts_from_run(data), resamples=RESAMPLES)

    before = judged(plain)
    assert all(r.status is not ClaimStatus.UNTESTABLE for r in before), before
    assert repr(judged(marked)) == repr(before)


def test_history_and_compare_are_those_of_the_runs_without_them(
    runs: tuple[RunData, RunData, int],
) -> None:
    plain, marked = (_analyse(d) for d in runs[:2])
    found = histories([plain, plain])
    assert found and repr(histories([plain, marked])) == repr(found)
    compared = compare_runs(plain, plain)
    assert compared.cases and repr(compare_runs(plain, marked)) == repr(compared)
    assert repr(compare_runs(marked, plain)) == repr(compared)
