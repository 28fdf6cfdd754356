"""stackbench.analysis.claims and claimtable on hand-made runs with hand-computed figures."""

import dataclasses
import functools
import math
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hdrh.histogram import HdrHistogram
from scipy import stats as scipy_stats

from stackbench.analysis import claimtable
from stackbench.analysis.claims import (
    ClaimResult,
    ClaimStatus,
    Facts,
    StackFacts,
    cores_note,
    evaluate,
    facts_from_plan,
    facts_from_run,
    level_metric,
    level_problem,
    requirements_unmet,
    scatter,
    undecided_claims,
)
from stackbench.analysis.claims.kinds import jitter_ratio_interval
from stackbench.config.claims import Claim, claims_from_data, parse_claims
from stackbench.config.measured import RoleUsage, Second
from stackbench.config.plan import LevelKey, build_plan
from stackbench.config.suite import parse_suite
from stackbench.config.todecide import ClaimRound, ToDecide, UndecidedClaim, claims_round
from stackbench.errors import InputError
from stackbench.store.records import (
    CalibrationRow,
    CaseRecord,
    Flag,
    PlacementSettings,
    RunRecord,
    RunSettings,
    VariantSettings,
)
from stackbench.store.store import (
    CaseRow,
    LevelRow,
    RunData,
    RunRow,
    ScriptRow,
    Store,
    VerificationRow,
)
from tests.measured import second
from tests.measured import usage as role_usage

ROOT = Path(__file__).resolve().parents[2]
CLAIMS_DIR = ROOT / "suites" / "claims"
RESAMPLES = 400  # enough for stable intervals in tests, quick to compute


def settings(**extra: Any) -> RunSettings:
    values: dict[str, Any] = dict(
        mode="closed",
        level_kind="connections",
        keepalive="on",
        driver="native",
        duration_s=5.0,
        requests=None,
        requests_per_connection=None,
        warmup_s=0.0,
        timeout_s=3.0,
        pause_s=0.0,
        repeat=1,
        threads=0,
        pipeline=1,
        jit_warmup=True,
        levels=(),
        max_error_rate=0.01,
        variant="",
        description="",
        slo=None,
        search=None,
        script_iterations=0,
        variants={},
        workload_levels={},
        workload_durations={},
        placement=PlacementSettings(server=(0,), loader=(1,), services=(0,)),
    )
    values.update(extra)
    return RunSettings(**values)


def script_row(
    stack: str,
    label: str,
    iterations: int,
    wall: float | None,
    user: float | None,
    sys: float | None,
    outcome: str,
) -> ScriptRow:
    return ScriptRow(
        run_id=1,
        stack=stack,
        label=label,
        iterations=iterations,
        wall_s=wall,
        user_s=user,
        sys_s=sys,
        outcome=outcome,
    )


# --- builders --------------------------------------------------------------------------------
def make_claim(
    test: dict[str, Any],
    requires: dict[str, Any] | None = None,
    figures: list[dict[str, Any]] | None = None,
) -> Claim:
    entry: dict[str, Any] = {"id": "c", "says": "a claim", "test": test}
    if requires is not None:
        entry["requires"] = requires
    if figures is not None:
        entry["figures"] = figures
    data = {"article": "000_test.txt", "title": "t", "suites": ["s"], "claim": [entry]}
    return claims_from_data(Path("t.toml"), data).claims[0]


def level(
    case_id: int,
    value: float,
    rps: float,
    rep: int = 0,
    *,
    latency_ms: dict[str, float] | None = None,
    errors: dict[str, int] | None = None,
    completed: int = 1000,
    duration_s: float = 10.0,
    status: str = "ok",
    flags: tuple[str, ...] = (),
    usage: dict[str, RoleUsage] | None = None,
    index: int | None = None,
) -> LevelRow:
    latency = {k: v * 1000.0 for k, v in (latency_ms or {"mean": 5.0, "p99": 9.0}).items()}
    errs = errors or {}
    return LevelRow(
        timeseries=seconds(rps, latency),
        id=0,
        case_id=case_id,
        level_index=int(value) if index is None else index,
        level_value=float(value),
        repetition=rep,
        driver="native",
        mode="closed",
        keepalive="on",
        started_at=0.0,
        duration_s=duration_s,
        completed=completed,
        ok=completed,
        errors=errs,
        requests_per_s=rps,
        latency_us=latency,
        usage=usage or {},
        flags=tuple(map(Flag.parse, flags)),
        status=status,
        command="",
    )


SECONDS = 12  # a 12-s level: its first 2 s dropped, a 10-s steady window
WOBBLE = (-2, 0, 2, -1, 1)  # ±1% per second, mean 0 over every 5 s


def seconds(rps: float, latency_us: dict[str, float]) -> tuple[Second, ...]:
    """A native loader's per-second series around `rps` (the 10-s window's mean is exactly
    rps) with each second's histogram (p50 at the level's mean latency, p99 at its p99), so a
    single repetition carries evidence as a real one does."""
    p50 = int(latency_us.get("p50", latency_us.get("mean", 5000.0)))
    p99 = int(latency_us.get("p99", p50))
    shown = _histogram(p50, p99)
    # Whole responses: rounded half to even, round(rps - x) + round(rps + x) = 2 rps for a
    # whole rps, so the window's mean stays rps (x = rps * w / 200 is exact for such x).
    return tuple(
        second(i + 1, rps + rps * WOBBLE[i % 5] / 200, p50_us=p50, p99_us=p99, histogram=shown)
        for i in range(SECONDS)
    )


@functools.cache
def _histogram(p50: int, p99: int) -> str:
    h = HdrHistogram(1, 60_000_000, 3)
    h.record_value(max(p50, 1), 98)
    h.record_value(max(p99, 1), 2)
    encoded = h.encode()
    return encoded.decode() if isinstance(encoded, bytes) else str(encoded)


class RunBuilder:
    """Cases and levels of a run; `facts()` gives the matching plan facts."""

    def __init__(self, calibrated: float | None = 0.001) -> None:
        # The band logic is tested on a quiet, calibrated machine (0.1% run-to-run spread);
        # calibrated=None leaves the assumed 5%, as on a machine never calibrated.
        self.calibrated = calibrated
        self.cases: list[CaseRow] = []
        self.levels: list[LevelRow] = []
        self.scripts: list[ScriptRow] = []
        self.verifications: list[VerificationRow] = []

    def case(self, stack: str, label: str, status: str = "ok", reason: str = "") -> int:
        cid = len(self.cases) + 1
        self.cases.append(
            CaseRow(
                id=cid,
                run_id=1,
                stack=stack,
                workload=label.split("?")[0],
                label=label,
                path="/" + label,
                params={},
                status=status,
                reason=reason,
            )
        )
        return cid

    def curve(
        self, stack: str, label: str, rps_by_level: dict[float, float | list[float]], **kw: Any
    ) -> int:
        cid = self.case(stack, label)
        for value, rps in rps_by_level.items():
            for rep, r in enumerate(rps if isinstance(rps, list) else [rps]):
                self.levels.append(level(cid, value, r, rep, **kw))
        return cid

    def data(self) -> RunData:
        run = RunRow(
            id=1,
            suite_name="s",
            suite_path="s.toml",
            suite_text="",
            settings=settings(),
            environment={},
            started_at=0.0,
            finished_at=1.0,
            status="complete",
        )
        calibration = (
            None
            if self.calibrated is None
            else CalibrationRow(
                id=1,
                machine="?/?/?",
                at=0.0,
                run_id=1,
                stack="go",
                workload="hello",
                level_value=50.0,
                figures=(1.0, 1.0, 1.0),
                within_variance=0.0,
                sigma=self.calibrated,
                sigma_used=self.calibrated,
            )
        )
        return RunData(run, self.cases, self.levels, self.verifications, self.scripts, calibration)

    def facts(self, **kw: Any) -> Facts:
        stacks = tuple(StackFacts(s, True) for s in dict.fromkeys(c.stack for c in self.cases))
        levels: dict[str, set[float]] = {}
        by_id = {c.id: c for c in self.cases}
        for lv in self.levels:
            levels.setdefault(by_id[lv.case_id].label, set()).add(lv.level_value)
        for c in self.cases:
            levels.setdefault(c.label, set())
        defaults: dict[str, Any] = {
            "server_cores": 1,
            "stacks": stacks,
            "workload_levels": {k: tuple(sorted(v)) for k, v in levels.items()},
        }
        return Facts(**{**defaults, **kw})


def one(claim: Claim, run: RunBuilder, **facts: Any) -> ClaimResult:
    (result,) = evaluate([claim], run.data(), run.facts(**facts), resamples=RESAMPLES)
    return result


ORDER = {
    "kind": "order",
    "metric": "requests_per_s",
    "workloads": ["hello"],
    "levels": [25],
    "stacks": ["a", "b", "c"],
}


# --- order -----------------------------------------------------------------------------------
def test_order_confirmed_when_every_pair_is_in_order():
    run = RunBuilder()
    for stack, rps in (("a", 300.0), ("b", 200.0), ("c", 100.0)):
        run.curve(stack, "hello", {25: rps})
    result = one(make_claim(ORDER), run)
    assert result.status is ClaimStatus.CONFIRMED
    # each figure, then each pair's ratio, with the interval the verdicts procedure gives
    assert [m.label for m in result.ours] == [
        "a hello @25",
        "b hello @25",
        "c hello @25",
        "a / b on hello @25",
        "b / c on hello @25",
    ]
    assert [m.value for m in result.ours] == pytest.approx([300.0, 200.0, 100.0, 1.5, 2.0])
    assert all(m.low is not None and m.low < m.value < m.high for m in result.ours)


def test_order_refuted_when_a_pair_is_reversed_and_names_it():
    run = RunBuilder()
    for stack, rps in (("a", 300.0), ("b", 100.0), ("c", 200.0)):
        run.curve(stack, "hello", {25: rps})
    result = one(make_claim(ORDER), run)
    assert result.status is ClaimStatus.REFUTED
    assert result.why == (
        "b / c on hello @25 is 0.50× (0.50–0.50), outside ≥ 1.00× (1 of 2 points)"
    )


def test_order_groups_compare_every_member_with_the_next_group():
    test = {**ORDER, "stacks": [["a", "b"], "c"]}
    run = RunBuilder()
    for stack, rps in (("a", 150.0), ("b", 300.0), ("c", 100.0)):
        run.curve(stack, "hello", {25: rps})
    assert one(make_claim(test), run).status is ClaimStatus.CONFIRMED  # a < b is allowed
    run = RunBuilder()
    for stack, rps in (("a", 90.0), ("b", 300.0), ("c", 100.0)):
        run.curve(stack, "hello", {25: rps})
    assert one(make_claim(test), run).status is ClaimStatus.REFUTED


def test_order_within_run_to_run_spread_is_not_enough_evidence_not_refuted():
    run = RunBuilder()
    run.curve("a", "hello", {25: [100.0, 130.0, 90.0, 125.0, 95.0]})
    run.curve("b", "hello", {25: [110.0, 95.0, 120.0, 100.0, 105.0]})
    run.curve("c", "hello", {25: [10.0, 11.0, 9.0, 10.0, 10.5]})
    result = one(make_claim(ORDER), run)
    assert result.status is ClaimStatus.UNDECIDED
    # a / b paired by repetition (analysis.paired): ln of 100/110, 130/95, 90/120, 125/100,
    # 95/105 = -0.0953, 0.3137, -0.2877, 0.2231, -0.0998; mean 0.0108, sd 0.2497, se 0.1117,
    # t(4) 2.776: e^(0.0108 ± 0.3101) = 0.74-1.38
    assert result.why.startswith(
        "not enough evidence: a / b on hello @25 is 1.01× (0.74–1.38), straddling ≥ 1.00×; "
    )
    assert (
        result.why.endswith("repetitions a side would be needed to decide it")
        or "repetitions a side (repeat = " in result.why
    )


def test_order_with_a_failed_case_is_untestable_with_its_reason():
    run = RunBuilder()
    run.curve("a", "hello", {25: 300.0})
    run.curve("b", "hello", {25: 400.0})  # would refute
    run.case("c", "hello", status="failed", reason="the server crashed")
    result = one(make_claim(ORDER), run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why == (
        "c failed on hello: the server crashed; where measured: a / b on "
        "hello @25 is 0.75× (0.74–0.76), outside ≥ 1.00×"
    )


def test_failed_verification_makes_the_claim_untestable():
    run = RunBuilder()
    for stack, rps in (("a", 300.0), ("b", 200.0), ("c", 100.0)):
        run.curve(stack, "hello", {25: rps})
    run.verifications.append(
        VerificationRow(
            run_id=1,
            stack="b",
            workload="hello",
            ok=False,
            checked=3,
            failures=("wrong body",),
            at=0.0,
        )
    )
    result = one(make_claim(ORDER), run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why == "b failed verification on hello: wrong body"


def test_loader_bound_levels_are_named_in_the_reason():
    run = RunBuilder()
    run.curve("a", "hello", {25: 300.0}, flags=("loader-bound",))
    run.curve("b", "hello", {25: 200.0})
    run.curve("c", "hello", {25: 100.0})
    result = one(make_claim(ORDER), run)
    assert result.status is ClaimStatus.CONFIRMED
    assert result.why.endswith("(loader-bound, so possibly the loader's limit: a hello @25)")


# --- ratio -----------------------------------------------------------------------------------
def ratio_test(expect: str, **kw: Any) -> dict[str, Any]:
    return {
        "kind": "ratio",
        "metric": "requests_per_s",
        "numerator": {"stack": "a"},
        "denominator": {"stack": "b"},
        "expect": expect,
        "workloads": ["w"],
        **kw,
    }


def two_stacks(a: dict[float, Any], b: dict[float, Any]) -> RunBuilder:
    run = RunBuilder()
    run.curve("a", "w", a)
    run.curve("b", "w", b)
    return run


@pytest.mark.parametrize(
    "expect, extra, a, status",
    [
        ("greater", {}, 150.0, ClaimStatus.CONFIRMED),  # 1.5 >= 1
        ("greater", {"threshold": 2.0}, 150.0, ClaimStatus.REFUTED),
        ("less", {}, 80.0, ClaimStatus.CONFIRMED),
        ("less", {"threshold": 0.5}, 80.0, ClaimStatus.REFUTED),
        # near 1.36 with tolerance 0.25: band 1.088..1.70
        ("near", {"article": 1.36, "tolerance": 0.25}, 110.0, ClaimStatus.CONFIRMED),
        ("near", {"article": 1.36, "tolerance": 0.25}, 175.0, ClaimStatus.REFUTED),
        ("near", {"article": 1.36, "tolerance": 0.25}, 106.0, ClaimStatus.REFUTED),
    ],
)
def test_ratio_bands(expect, extra, a, status):
    run = two_stacks({25: a}, {25: 100.0})
    result = one(make_claim(ratio_test(expect, **extra)), run)
    assert result.status is status, result.why
    assert result.ours[0].value == pytest.approx(a / 100.0)
    assert result.ours[0].unit == "×"


def test_ratio_over_all_levels_reads_every_level_and_refutes_on_one():
    run = two_stacks({300: 150.0, 500: 140.0, 700: 90.0}, {300: 100.0, 500: 100.0, 700: 100.0})
    result = one(make_claim(ratio_test("greater")), run)
    assert [m.label for m in result.ours] == [
        "a / b on w @300",
        "a / b on w @500",
        "a / b on w @700",
    ]
    assert result.status is ClaimStatus.REFUTED
    assert result.why == "a / b on w @700 is 0.90× (0.89–0.91), outside ≥ 1.00× (1 of 3 points)"


def test_ratio_interval_decides_only_when_it_clears_the_bound():
    clear = two_stacks({25: [200.0, 210.0, 190.0, 205.0]}, {25: [100.0, 102.0, 98.0, 101.0]})
    result = one(make_claim(ratio_test("greater")), clear)
    assert result.status is ClaimStatus.CONFIRMED
    m = result.ours[0]
    assert m.low is not None and m.high is not None and 1.0 < m.low <= m.value <= m.high
    noisy = two_stacks({25: [90.0, 130.0, 100.0, 125.0]}, {25: [100.0, 110.0, 95.0, 120.0]})
    assert one(make_claim(ratio_test("greater")), noisy).status is ClaimStatus.UNDECIDED


def test_ratio_of_a_stack_at_two_levels():
    test = {
        "kind": "ratio",
        "metric": "requests_per_s",
        "expect": "less",
        "workloads": ["w"],
        "numerator": {"stack": "a", "level": 7000},
        "denominator": {"stack": "a", "level": 3000},
    }
    run = RunBuilder()
    run.curve("a", "w", {3000: 7677.0, 5000: 7232.0, 7000: 6743.0})
    result = one(make_claim(test), run)
    assert result.status is ClaimStatus.CONFIRMED
    assert result.ours[0].value == pytest.approx(6743 / 7677)
    assert result.ours[0].label == "a w: @7,000 / @3,000"


def test_ratio_between_workloads_named_on_the_sides():
    test = {
        "kind": "ratio",
        "metric": "requests_per_s",
        "expect": "less",
        "threshold": 0.6,
        "numerator": {"stack": "a", "workload": "mysql"},
        "denominator": {"stack": "a", "workload": "hello"},
    }
    run = RunBuilder()
    run.curve("a", "hello", {300: 1000.0, 500: 900.0})
    run.curve("a", "mysql", {300: 390.0, 500: 600.0})
    result = one(make_claim(test), run)
    assert [m.value for m in result.ours] == pytest.approx([0.39, 600 / 900])
    assert result.status is ClaimStatus.REFUTED


def test_ratio_at_peak_uses_the_best_level():
    test = {
        "kind": "ratio",
        "metric": "requests_per_s",
        "expect": "near",
        "article": 1.4,
        "workloads": ["w"],
        "numerator": {"stack": "a", "level": "peak"},
        "denominator": {"stack": "b", "level": "peak"},
    }
    run = two_stacks({1: 50.0, 100: 140.0, 200: 120.0}, {1: 40.0, 100: 90.0, 200: 100.0})
    result = one(make_claim(test), run)
    assert result.ours[0].value == pytest.approx(1.4)
    assert result.ours[0].label == "a w peak @100 / b w peak @200"
    assert result.status is ClaimStatus.CONFIRMED


def test_ratio_with_a_metric_per_side():
    test = {
        "kind": "ratio",
        "metric": "server_cpu",
        "expect": "greater",
        "threshold": 2.0,
        "workloads": ["w"],
        "numerator": {"stack": "a"},
        "denominator": {"stack": "a", "metric": "service_cpu"},
    }
    usage = {"node": role_usage(80.0), "mariadb": role_usage(16.0), "loader": role_usage(40.0)}
    run = RunBuilder()
    # CPU has no per-second series: only repetitions give it evidence
    run.curve("a", "w", {20: [100.0, 100.0]}, usage=usage)
    result = one(make_claim(test), run)
    assert result.ours[0].value == pytest.approx(5.0)
    assert result.ours[0].label == "a w @20: server_cpu / service_cpu"
    assert result.status is ClaimStatus.CONFIRMED


def test_ratio_on_standalone_timings_is_per_iteration():
    test = {
        "kind": "ratio",
        "metric": "script_user",
        "expect": "near",
        "article": 1.84,
        "tolerance": 0.4,
        "workloads": ["db-report"],
        "numerator": {"stack": "node"},
        "denominator": {"stack": "php"},
    }
    run = RunBuilder()
    run.case("node", "db-report")
    run.case("php", "db-report")
    run.scripts += [
        script_row("node", "db-report", 100, 0.98, 0.67, 0.14, "not checked (db)"),
        script_row("php", "db-report", 1000, 7.41, 3.653, 2.107, "ok"),
    ]
    result = one(make_claim(test), run, script_iterations=1000)
    # node 0.67/100 = 6.7 ms per iteration, php 3.653/1000 = 3.653 ms: 1.834
    assert result.ours[0].value == pytest.approx(0.0067 / 0.003653)
    assert result.status is ClaimStatus.CONFIRMED


def test_a_stated_magnitude_refutes_a_result_far_beyond_it():
    """db-html-report's script-php-finishes-first, as the file states it: Node takes about
    1.32x PHP's time. A 2.5x result is direction-right but refutes the magnitude; 1.4x
    confirms it (each read from the real claims file, so the file's band is what is tested)."""
    (claim,) = [
        c
        for c in parse_claims(CLAIMS_DIR / "db-html-report.toml").claims
        if c.id == "script-php-finishes-first"
    ]

    def judged(node_wall: float) -> ClaimResult:
        run = RunBuilder()
        run.case("node", "db-report")
        run.case("php-apache", "db-report")
        # 10,000 iterations: timings longer than the calibration's levels, so the quiet
        # calibrated spread (not the assumed 10% of shorter whole runs) is their uncertainty
        run.scripts += [
            script_row("node", "db-report", 10000, 10 * node_wall, 67, 14, "ok"),
            script_row("php-apache", "db-report", 10000, 74.1, 36.5, 21, "ok"),
        ]
        stacks = (
            StackFacts("node", True, params={"mysql_driver": "mysql"}),
            StackFacts("php-apache", True),
        )
        return one(claim, run, script_iterations=1000, stacks=stacks)

    far = judged(2.5 * 7.41)
    assert far.status is ClaimStatus.REFUTED, far.why
    assert "outside 1.06–1.65×" in far.why
    near = judged(1.4 * 7.41)
    assert near.status is ClaimStatus.CONFIRMED, near.why


def test_a_failed_standalone_timing_is_untestable():
    test = {
        "kind": "ratio",
        "metric": "script_wall",
        "expect": "greater",
        "workloads": ["db-report"],
        "numerator": {"stack": "node"},
        "denominator": {"stack": "php"},
    }
    run = RunBuilder()
    run.case("node", "db-report")
    run.case("php", "db-report")
    run.scripts += [
        script_row("node", "db-report", 10, None, None, None, "exit 1"),
        script_row("php", "db-report", 10, 1.0, 0.5, 0.1, "ok"),
    ]
    result = one(make_claim(test), run, script_iterations=10)
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why == "node standalone db-report: the timing failed (exit 1)"


def test_ratio_change_is_the_quotient_of_two_ratios():
    test = {
        "kind": "ratio_change",
        "metric": "requests_per_s",
        "expect": "greater",
        "numerator": {"stack": "pool"},
        "denominator": {"stack": "plain"},
        "before": {"workload": "redis"},
        "after": {"workload": "mysql"},
        "levels": [3000],
    }
    run = RunBuilder()
    run.curve("pool", "redis", {3000: 5262.0})
    run.curve("plain", "redis", {3000: 5479.0})
    run.curve("pool", "mysql", {3000: 2999.0})
    run.curve("plain", "mysql", {3000: 2465.0})
    result = one(make_claim(test), run)
    assert result.ours[0].value == pytest.approx((2999 / 2465) / (5262 / 5479))  # 1.267
    assert result.status is ClaimStatus.CONFIRMED
    assert result.ours[0].label == "(pool / plain) redis → mysql @3,000"


# --- threshold -------------------------------------------------------------------------------
ERRORS = {
    "kind": "threshold",
    "metric": "errors",
    "stacks": ["php"],
    "workloads": ["mysql"],
    "levels": [5000, 7000],
    "min": 1,
}


def test_errors_threshold_reads_levels_invalid_for_their_error_rate():
    flag = ("invalid: error rate 1.5% > 1.0%",)
    run = RunBuilder()
    run.curve("php", "mysql", {5000: 1349.0}, errors={"connect": 111})
    cid = run.cases[-1].id
    run.levels.append(
        level(cid, 7000, 1301.0, errors={"timeout": 573}, status="invalid", flags=flag)
    )
    result = one(make_claim(ERRORS), run)
    assert result.status is ClaimStatus.CONFIRMED
    assert [m.value for m in result.ours] == [111.0, 573.0]


def test_throughput_on_a_level_invalid_for_errors_is_untestable():
    test = {**ERRORS, "metric": "requests_per_s", "min": 100}
    run = RunBuilder()
    cid = run.case("php", "mysql")
    run.levels += [
        level(cid, 5000, 1349.0),
        level(cid, 7000, 1301.0, status="invalid", flags=("invalid: error rate 50.0% > 5.0%",)),
    ]
    result = one(make_claim(test), run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why == "php mysql @7,000: level invalid: error rate 50.0% > 5.0%"


def test_unsteady_level_is_untestable_even_for_error_claims():
    run = RunBuilder()
    cid = run.case("php", "mysql")
    run.levels += [
        level(cid, 5000, 5.0, errors={"connect": 3}),
        level(
            cid,
            7000,
            0.0,
            completed=10,
            status="invalid",
            flags=(
                "unsteady: 10 responses for 7000 connections in 5 s; raise duration_s",
                "invalid: error rate 9.0% > 1.0%",
            ),
        ),
    ]
    result = one(make_claim(ERRORS), run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert "level invalid: unsteady: 10 responses" in result.why


def test_errors_threshold_refuted_when_no_request_failed():
    run = RunBuilder()
    run.curve("php", "mysql", {5000: 1349.0, 7000: 1301.0})
    result = one(make_claim(ERRORS), run)
    assert result.status is ClaimStatus.REFUTED
    assert result.why == (
        "php mysql @5,000 is 0 failed requests, outside ≥ 1 failed requests (2 of 2 points)"
    )


def test_at_least_confirms_despite_a_missing_stack_but_never_refutes_with_one():
    test = {
        "kind": "threshold",
        "metric": "error_rate",
        "stacks": ["a", "b", "c", "d"],
        "workloads": ["w"],
        "levels": [5000],
        "min": 0.01,
        "at_least": 3,
    }
    run = RunBuilder()
    for stack in ("a", "b", "c"):
        run.curve(stack, "w", {5000: 100.0}, errors={"timeout": 50}, completed=950)
    run.case("d", "w", status="failed", reason="crashed")
    # 50 / (950 + 50) = 5% >= 1% on three of four: decided whatever d would show
    assert one(make_claim(test), run).status is ClaimStatus.CONFIRMED
    run = RunBuilder()
    run.curve("a", "w", {5000: 100.0}, errors={"timeout": 50}, completed=950)
    run.curve("b", "w", {5000: 100.0})
    run.curve("c", "w", {5000: 100.0})
    run.case("d", "w", status="failed", reason="crashed")
    result = one(make_claim(test), run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why.startswith("d failed on w: crashed")


def test_error_rate_counts_unanswered_attempts():
    row = level(1, 300, 10.0, errors={"timeout": 100, "status": 50}, completed=900)
    # status errors are completed responses; timeouts are extra attempts: 150 / 1000
    assert level_metric(row, "error_rate") == pytest.approx(0.15)
    assert level_metric(row, "errors") == 150.0


def test_ab_time_per_request_figures():
    row = level(1, 20, 1173.0, completed=2000, duration_s=1.705)
    # ab: 20 clients x 1.705 s / 2000 requests = 17.05 ms; across all: 0.8525 ms
    assert level_metric(row, "time_per_request") == pytest.approx(17.05)
    assert level_metric(row, "time_per_request_all") == pytest.approx(0.8525)
    assert level_metric(row, "p80") == "the native driver did not measure p80"
    assert level_metric(level(1, 20, 0.0, completed=0), "mean_latency") == "no request completed"


def test_level_problem_tells_measurement_faults_from_server_failures():
    errors_only = [
        level(
            1,
            5000,
            1.0,
            status="invalid",
            flags=("starved: 1 request", "invalid: error rate 6.0% > 5.0%"),
        )
    ]
    assert level_problem(errors_only, failures_are_data=True) is None
    assert level_problem(errors_only, failures_are_data=False) == (
        "level invalid: error rate 6.0% > 5.0%"
    )
    failed = [level(1, 5000, 1.0, status="failed", flags=("loader crashed",))]
    assert level_problem(failed, failures_are_data=True) == "the level failed (loader crashed)"


# --- shape -----------------------------------------------------------------------------------
def test_flat_shape_by_hand():
    test = {
        "kind": "shape",
        "metric": "requests_per_s",
        "stacks": ["php", "node"],
        "workloads": ["w"],
        "from_level": 20,
        "to_level": 200,
        "expect": "flat",
        "tolerance": 0.1,
    }
    run = RunBuilder()
    run.curve("php", "w", {20: 1173.0, 200: 1146.0})
    run.curve("node", "w", {20: 119.0, 200: 114.0})
    result = one(make_claim(test), run)
    assert result.status is ClaimStatus.CONFIRMED
    spreads = [m.value for m in result.ours if m.label.endswith("spread (largest / smallest)")]
    assert spreads == pytest.approx([1173 / 1146, 119 / 114])
    run = RunBuilder()
    run.curve("php", "w", {20: 460.0, 200: 584.0})  # 1.27x
    run.curve("node", "w", {20: 119.0, 200: 114.0})
    assert one(make_claim(test), run).status is ClaimStatus.REFUTED


def test_proportional_shape_divides_by_the_level():
    test = {
        "kind": "shape",
        "metric": "mean_latency",
        "stacks": ["php"],
        "workloads": ["w"],
        "from_level": 20,
        "to_level": 200,
        "expect": "proportional",
        "tolerance": 0.2,
    }
    run = RunBuilder()
    cid = run.case("php", "w")
    # a mean latency has no per-second series: its repetitions give it evidence, floored by
    # the calibrated spread (the 20-s levels outlast the calibration's)
    for value, mean in ((20, 17.0), (200, 174.0)):
        run.levels += [
            level(cid, value, 1.0, rep, latency_ms={"mean": mean}, duration_s=20.0)
            for rep in (0, 1)
        ]
    result = one(make_claim(test), run)
    # 17/20 = 0.85, 174/200 = 0.87 per client: spread 1.0235
    assert result.ours[-1].value == pytest.approx(0.87 / 0.85)
    assert result.status is ClaimStatus.CONFIRMED


# --- scatter ---------------------------------------------------------------------------------
def test_scatter_of_a_straight_line_is_zero_and_scale_free():
    line = [(float(x), 10.0 + 2.0 * x) for x in range(100, 1100, 100)]
    assert scatter(line, (100, 1000)) == pytest.approx(0.0, abs=1e-12)
    rng = random.Random(3)
    noisy = [(x, y * (1 + rng.uniform(-0.2, 0.2))) for x, y in line]
    scaled = [(x, 7.0 * y) for x, y in noisy]
    assert scatter(noisy, (100, 1000)) == pytest.approx(scatter(scaled, (100, 1000)))
    assert scatter(noisy, (100, 200)) is None  # two levels only


# Apache's jitter past 2,000 against below it (the spans of calm_then_wild)
SCATTER_SPANS = {
    "kind": "scatter",
    "metric": "requests_per_s",
    "workload": "w",
    "numerator": {"stack": "apache", "from_level": 2100, "to_level": 4000},
    "denominator": {"stack": "apache", "from_level": 100, "to_level": 2000},
    "threshold": 1.5,
}


def calm_then_wild(rng: random.Random) -> tuple[dict[float, float], dict[float, float]]:
    """20 calm levels (±1%) from 100 to 2,000, then 20 jittery ones (±30%) to 4,000."""
    calm = {float(x): (8000.0 - x) * (1 + rng.gauss(0, 0.01)) for x in range(100, 2100, 100)}
    wild = {float(x): (8000.0 - x) * (1 + rng.choice([-0.3, 0.3])) for x in range(2100, 4100, 100)}
    return calm, wild


def test_scatter_claim_compares_spans():
    # 20 calm levels, then 20 jittery ones (±30%): decided, with the interval of an F ratio
    test = SCATTER_SPANS
    rng = random.Random(5)
    calm, wild = calm_then_wild(rng)
    run = RunBuilder()
    run.curve("apache", "w", {**calm, **wild})
    result = one(make_claim(test), run)
    assert result.status is ClaimStatus.CONFIRMED, result.why
    ratio = result.ours[-1]
    assert ratio.low is not None and ratio.low >= 1.5
    # the same jump over 4 and 6 levels: far too few to place the ratio of two jitters
    few = RunBuilder()
    few.curve(
        "apache",
        "w",
        {
            float(x): (8000.0 - x) * (1 + rng.choice([-0.1, 0.1]) * (3 if x >= 2500 else 1))
            for x in [*range(100, 500, 100), *range(2500, 3100, 100)]
        },
    )
    short = dict(
        test,
        numerator={"stack": "apache", "from_level": 2500, "to_level": 3000},
        denominator={"stack": "apache", "from_level": 100, "to_level": 400},
    )
    undecided = one(make_claim(short), few)
    assert undecided.status is ClaimStatus.UNDECIDED, undecided.why
    assert "more levels in each span" in undecided.why


def test_scatter_reads_each_level_over_the_plan_repetitions_only():
    """The rounds of run --until-decided add fresh starts at a few levels (here three at
    300, each far off the sweep): the jitters and their ratio are those of the plan's own
    sweep, as if the rounds had not run; a median over every repetition would have put 300
    at 2,000 and the calm span's jitter ten times over."""
    test = {
        "kind": "scatter",
        "metric": "requests_per_s",
        "workload": "w",
        "numerator": {"stack": "apache", "from_level": 500, "to_level": 800},
        "denominator": {"stack": "apache", "from_level": 100, "to_level": 400},
        "threshold": 1.5,
    }
    sweep = {100.0: 1010.0, 200.0: 990.0, 300.0: 1010.0, 400.0: 990.0}
    sweep |= {500.0: 1100.0, 600.0: 900.0, 700.0: 1100.0, 800.0: 900.0}
    plan = RunBuilder()
    plan.curve("apache", "w", sweep)
    rounds = RunBuilder()
    rounds.curve("apache", "w", {**sweep, 300.0: [1010.0, 2000.0, 2000.0, 2000.0]})
    alone, repeated = one(make_claim(test), plan), one(make_claim(test), rounds)
    assert repeated.ours == alone.ours and repeated.status is alone.status
    calm = scatter(list(sweep.items()), (100, 400))
    assert calm is not None and repeated.ours[1].value == pytest.approx(100.0 * calm)
    medians = scatter([(x, 2000.0 if x == 300.0 else y) for x, y in sweep.items()], (100, 400))
    assert medians is not None and medians > 10 * calm


def test_jitter_ratio_interval_by_hand():
    # F(0.975; 18, 18) = 2.5956 (tables), and F(0.025; 18, 18) is its inverse
    low, high = jitter_ratio_interval(2.0, 20, 20)
    assert low == pytest.approx(2.0 / math.sqrt(2.5956), rel=1e-3)
    assert high == pytest.approx(2.0 * math.sqrt(2.5956), rel=1e-3)


def test_scatter_rule_error_rates_by_simulation():
    """A/A: two spans with the same jitter are rarely called 1.5x jitterier (the one-sided
    error of a 95% interval is 2.5%); a real 3x jitter over 20 levels a span is found."""
    rng = random.Random(11)

    def confirmed(true_ratio: float, levels: int) -> bool:
        xs = [float(100 * i) for i in range(1, 2 * levels + 1)]
        ys = [
            (9000.0 - x) * (1 + rng.gauss(0, 0.02 * (true_ratio if x > xs[levels - 1] else 1.0)))
            for x in xs
        ]
        points = list(zip(xs, ys, strict=True))
        num = scatter(points, (xs[levels], xs[-1]))
        den = scatter(points, (xs[0], xs[levels - 1]))
        assert num is not None and den is not None
        low, _ = jitter_ratio_interval(num / den, levels, levels)
        return low >= 1.5

    trials = 300
    false_rate = sum(confirmed(1.0, 20) for _ in range(trials)) / trials
    power = sum(confirmed(3.0, 20) for _ in range(trials)) / trials
    assert false_rate <= 0.03, false_rate
    assert power >= 0.8, power


# --- breakpoint ------------------------------------------------------------------------------
def sweep(
    run: RunBuilder,
    stack: str,
    p99_ms: dict[float, float],
    timeouts: dict[float, int] | None = None,
) -> None:
    cid = run.case(stack, "w")
    for i, (value, p99) in enumerate(p99_ms.items()):
        errs = {"timeout": (timeouts or {}).get(value, 0)}
        run.levels.append(
            level(
                cid,
                value,
                1000.0,
                latency_ms={"p99": p99, "mean": p99 / 2},
                errors={k: v for k, v in errs.items() if v},
                index=i,
            )
        )


BREAK = {
    "kind": "breakpoint",
    "stack": "apache",
    "workload": "w",
    "metric": "p99",
    "above": 3000,
    "max_error_rate": 0.01,
}


def test_breakpoint_within_range():
    run = RunBuilder()
    sweep(run, "apache", {100: 50, 4000: 900, 8000: 2500, 8500: 3100, 9000: 3500})
    result = one(make_claim({**BREAK, "expect": "within", "range": [6000, 10000]}), run)
    assert result.status is ClaimStatus.CONFIRMED
    assert (
        result.why == "apache first fails at 8,500 (p99 3,100 ms > 3,000 ms) and at the next "
        "level, above 8,000, between 6,000 and 10,000"
    )
    (bp,) = result.ours
    assert (bp.value, bp.low, bp.high) == (8500, 8000, 8500)


def test_breakpoint_interval_across_the_range_is_not_enough_evidence():
    """(5,000, 7,000] reaches below 6,000: a level between them would decide."""
    run = RunBuilder()
    sweep(run, "apache", {100: 50, 5000: 2500, 7000: 3100, 8000: 3500})
    result = one(make_claim({**BREAK, "expect": "within", "range": [6000, 10000]}), run)
    assert result.status is ClaimStatus.UNDECIDED
    assert "reaches across between 6,000 and 10,000" in result.why


def test_breakpoint_needs_a_crossing_that_holds():
    """A lone level over the limit (the next one within) is a blip, not the breakpoint; the
    sweep's last level crossing once is not yet one; repetitions that all cross hold."""
    run = RunBuilder()
    sweep(run, "apache", {100: 50, 2000: 3200, 4000: 900, 7000: 900, 8000: 3100, 9000: 3500})
    result = one(make_claim({**BREAK, "expect": "within", "range": [6000, 10000]}), run)
    assert result.status is ClaimStatus.CONFIRMED
    assert result.why.endswith("(crossed alone, not held, at 2,000), between 6,000 and 10,000")
    none = {**BREAK, "expect": "none", "up_to": 10000}
    run = RunBuilder()
    sweep(run, "apache", {100: 50, 5000: 900, 10000: 3100})
    result = one(make_claim(none), run)
    assert result.status is ClaimStatus.UNDECIDED
    assert "fails only at 10,000, the sweep's last level, not in every repetition" in result.why
    run = RunBuilder()
    cid = run.case("apache", "w")
    for rep, p99 in enumerate((3100.0, 3300.0)):
        run.levels.append(level(cid, 100, 1000.0, rep, latency_ms={"p99": 50, "mean": 1}))
        run.levels.append(level(cid, 10000, 1000.0, rep, latency_ms={"p99": p99, "mean": 1}))
    result = one(make_claim(none), run)
    assert result.status is ClaimStatus.REFUTED
    assert "first fails at 10,000 (p99 3,200 ms > 3,000 ms) in every repetition" in result.why


def test_breakpoint_by_error_rate_before_the_range_refutes():
    run = RunBuilder()
    sweep(run, "apache", {100: 50, 800: 200, 900: 200}, timeouts={800: 20, 900: 30})
    result = one(make_claim({**BREAK, "expect": "within", "range": [6000, 10000]}), run)
    assert result.status is ClaimStatus.REFUTED
    assert "first fails at 800 (error rate 2.0% > 1.0%)" in result.why


def test_breakpoint_untestable_when_the_sweep_ends_before_the_range():
    run = RunBuilder()
    sweep(run, "apache", {100: 50, 800: 200})
    result = one(make_claim({**BREAK, "expect": "within", "range": [6000, 10000]}), run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why.startswith("apache holds up to 800, where the sweep ends")


def test_breakpoint_none_and_before():
    run = RunBuilder()
    sweep(run, "apache", {100: 50, 5000: 3500, 10000: 9000})
    sweep(run, "beast", {100: 10, 5000: 400, 10000: 900})
    none = {**BREAK, "stack": "beast", "expect": "none", "up_to": 10000}
    assert one(make_claim(none), run).status is ClaimStatus.CONFIRMED
    assert one(make_claim({**none, "stack": "apache"}), run).status is ClaimStatus.REFUTED
    before = {**BREAK, "expect": "before", "other": "beast"}
    assert one(make_claim(before), run).status is ClaimStatus.CONFIRMED
    reverse = {**before, "stack": "beast", "other": "apache"}
    assert one(make_claim(reverse), run).status is ClaimStatus.REFUTED


def test_breakpoint_counts_a_level_where_nothing_completed_as_broken():
    run = RunBuilder()
    cid = run.case("apache", "w")
    run.levels += [
        level(cid, 100, 900.0, index=0),
        level(cid, 6000, 900.0, index=1),
        level(cid, 7000, 0.0, completed=0, errors={"timeout": 7000}, index=2),
        level(cid, 8000, 0.0, completed=0, errors={"timeout": 8000}, index=3),
    ]
    test = {**BREAK, "max_error_rate": None, "expect": "within", "range": [6000, 10000]}
    del test["max_error_rate"]
    result = one(make_claim(test), run)
    assert result.status is ClaimStatus.CONFIRMED
    assert "nothing answered (no request completed)" in result.why


# --- requirements ----------------------------------------------------------------------------
def facts(**kw: Any) -> Facts:
    base: dict[str, Any] = {
        "server_cores": 1,
        "stacks": (
            StackFacts("a", True, params={"db_strategy": "pool"}),
            StackFacts("b", True),
            StackFacts("c", False, "swoole not present; install: pecl install swoole"),
        ),
        "workload_levels": {"hello": (300.0, 5000.0), "w": (25.0,)},
        "keepalive": "on",
        "driver": "native",
        "warmup_s": 0.0,
        "requests": 2000,
    }
    return Facts(**{**base, **kw})


def reasons(claim: Claim, f: Facts) -> tuple[str, ...]:
    (ready,) = requirements_unmet([claim], f)
    return ready.reasons


RATIO_AB = {
    "kind": "ratio",
    "metric": "requests_per_s",
    "numerator": {"stack": "a"},
    "denominator": {"stack": "b"},
    "expect": "greater",
    "workloads": ["hello"],
    "levels": [300],
}


def test_requirements_met():
    assert reasons(make_claim(RATIO_AB), facts()) == ()


def test_cores_note_says_up_front_what_the_server_lacks():
    four, two, none = (make_claim(RATIO_AB, {"server_cores": n}) for n in (4, 2, 1))
    readiness = requirements_unmet([four, two, none], facts(server_cores=1))
    assert cores_note(4, 1, readiness) == (
        "The article's server had 4 cores; this machine gives the server 1 core, so the stacks "
        "size their workers for 1 and 2 of the article's claims (needing up to 4 server "
        "cores) are untestable here."
    )
    # the article's cores unknown: only the claims that need more
    assert cores_note(None, 1, readiness[1:]) == (
        "This machine gives the server 1 core, so 1 of the article's claims (needing up to 2 "
        "server cores) is untestable here."
    )
    # a suite without claims still says its article had more
    assert cores_note(4, 2, ()) == (
        "The article's server had 4 cores; this machine gives "
        "the server 2 cores, so the stacks size their workers "
        "for 2."
    )
    assert cores_note(4, 4, readiness) == ""  # nothing short
    assert cores_note(1, 1, readiness[2:]) == ""
    assert cores_note(None, 8, readiness) == ""


@pytest.mark.parametrize(
    "requires, message",
    [
        ({"server_cores": 4}, "needs 4 server cores; this run gives the server 1"),
        (
            {"keepalive": "off"},
            "needs keep-alive off as in the article; this run has keep-alive on",
        ),
        ({"drivers": ["ab"]}, "needs the ab driver; this run uses native"),
        (
            {"min_warmup_s": 5},
            "needs JIT stacks measured warm: at least 5 s of warm-up per level "
            "or the JIT warm-up pass; this run warms up 0 s with [load] "
            "jit_warmup = false",
        ),
        (
            {"params": {"a": {"db_strategy": "per-request"}}},
            "needs a with db_strategy = per-request; this run sets db_strategy = pool",
        ),
        (
            {"params": {"b": {"assoc_impl": "object"}}},
            "needs b with assoc_impl = object; b has no parameter assoc_impl here",
        ),
        ({"stacks": ["c"]}, "c is unavailable here: swoole not present"),
        ({"stacks": ["zz"]}, "needs the stack zz, which this suite does not run"),
    ],
)
def test_each_requirement_says_why(requires, message):
    assert reasons(make_claim(RATIO_AB, requires), facts()) == (message,)


def test_the_jit_warm_up_pass_or_long_enough_level_warm_ups_warm_the_jits():
    warm = make_claim(RATIO_AB, {"min_warmup_s": 5})
    assert reasons(warm, facts(jit_warmup=True)) == ()
    assert reasons(warm, facts(warmup_s=5.0)) == ()
    assert len(reasons(warm, facts(warmup_s=4.0))) == 1


def test_test_implied_requirements():
    at_1000 = {**RATIO_AB, "levels": [1000]}
    assert reasons(make_claim(at_1000), facts()) == (
        "needs level 1,000 for hello; the suite runs 300, 5,000",
    )
    at_5000 = {**RATIO_AB, "levels": [5000]}
    assert reasons(make_claim(at_5000), facts()) == (
        "level 5,000 of hello sends only 2,000 requests, so at most 2,000 of its 5,000 "
        "connections are ever open",
    )
    assert reasons(make_claim(at_5000), facts(requests=None, requests_per_connection=3)) == ()
    other = {**RATIO_AB, "workloads": ["mysql"], "levels": "all"}
    assert reasons(make_claim(other), facts()) == (
        "needs the workload mysql, which this suite does not run",
    )
    assert reasons(make_claim(RATIO_AB), facts(level_kind="rate")) == (
        "the article's levels are concurrent connections; this suite runs request rates",
    )
    script = {
        "kind": "ratio",
        "metric": "script_wall",
        "numerator": {"stack": "a"},
        "denominator": {"stack": "b"},
        "expect": "greater",
        "workloads": ["w"],
    }
    assert reasons(make_claim(script), facts()) == (
        "needs the standalone timing (script_iterations); this suite has none",
    )
    assert reasons(make_claim(script), facts(script_iterations=100)) == ()


def test_unmet_requirement_makes_evaluate_untestable_with_every_reason():
    run = two_stacks({300: 200.0}, {300: 100.0})
    claim = make_claim({**RATIO_AB, "workloads": ["w"]}, {"server_cores": 4, "keepalive": "off"})
    result = one(claim, run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why == (
        "needs 4 server cores; this run gives the server 1 (and 1 more: "
        "needs keep-alive off as in the article; this run has keep-alive on)"
    )
    assert result.ours == ()


def test_facts_from_a_plan_carry_its_standalone_timings(tmp_path, fake_inventory):
    path = tmp_path / "s.toml"
    path.write_text(
        'stacks = ["refserver"]\nworkloads = ["hello"]\nscript_iterations = 10\n'
        "script_timings = 4\n[load]\nrepeat = 3\n"
    )
    plan = build_plan(parse_suite(path), fake_inventory, None, None)
    f = facts_from_plan(plan, fake_inventory)
    assert (f.script_iterations, f.script_timings, f.repeat) == (10, 4, 3)


# --- facts from a stored run -----------------------------------------------------------------
def test_facts_from_a_stored_run_through_the_store():
    store = Store(":memory:")
    run_id = store.start_run(
        RunRecord(
            suite_name="s",
            suite_path="s.toml",
            suite_text="",
            environment={},
            started_at=0.0,
            settings=settings(
                keepalive="off",
                driver="ab",
                warmup_s=2.0,
                requests_per_connection=100,
                levels=(20.0, 200.0),
                workload_levels={"sha256?n=1": (300.0, 5000.0)},
                script_iterations=100,
                script_timings=3,
                placement=PlacementSettings(server=(0, 1), loader=(2,), services=(0,)),
                variants={
                    "node-cluster-pool": VariantSettings(
                        stack="node-cluster", params={"db_strategy": "pool"}
                    )
                },
            ),
        )
    )
    store.add_case(
        CaseRecord(
            run_id=run_id,
            stack="node-cluster-pool",
            workload="db-report",
            label="db-report",
            path="/db-report",
            params={"db_strategy": "pool"},
            status="ok",
        )
    )
    store.add_case(
        CaseRecord(
            run_id=run_id,
            stack="php-swoole",
            workload="sha256",
            label="sha256?n=1",
            path="/sha256?n=1",
            params={},
            status="unavailable",
            reason="swoole not present",
        )
    )
    data = store.load_run(run_id)
    f = facts_from_run(
        data, {"node-cluster": {"workers": "{{server_core_count}}", "db_strategy": "per-request"}}
    )
    assert f.server_cores == 2 and f.keepalive == "off" and f.driver == "ab"
    assert f.request_count(200) == 20000 and f.script_iterations == 100
    assert f.script_timings == 3
    assert f.workload_levels == {"db-report": (20.0, 200.0), "sha256?n=1": (300.0, 5000.0)}
    pool = f.stack("node-cluster-pool")
    assert pool is not None and pool.params == {"workers": "2", "db_strategy": "pool"}
    swoole = f.stack("php-swoole")
    assert swoole is not None and not swoole.available and swoole.reason == "swoole not present"


def test_facts_from_a_stored_run_take_the_parameters_the_stack_started_with():
    store = Store(":memory:")
    run_id = store.start_run(
        RunRecord(
            suite_name="s",
            suite_path="s.toml",
            suite_text="",
            environment={},
            started_at=0.0,
            settings=settings(),
        )
    )
    for label, effective in (
        ("hello", {"workers": "3", "db_strategy": "pool"}),
        ("mysql-row", {}),
    ):  # a later case of the stack that never started
        store.add_case(
            CaseRecord(
                run_id=run_id,
                stack="node-cluster",
                workload=label,
                label=label,
                path="/" + label,
                params={},
                status="ok",
                effective_params=effective,
            )
        )
    f = facts_from_run(
        store.load_run(run_id),
        {"node-cluster": {"workers": "{{server_core_count}}", "db_strategy": "per-request"}},
    )
    cluster = f.stack("node-cluster")
    assert cluster is not None and cluster.params == {"workers": "3", "db_strategy": "pool"}


# --- the claim table -------------------------------------------------------------------------
def test_claim_table_rows_show_both_figures():
    run = two_stacks({25: [150.0, 152.0, 148.0]}, {25: [100.0, 101.0, 99.0]})
    claim = make_claim(
        ratio_test("near", article=1.36, levels=[25]),
        figures=[
            {"label": "a", "value": 5479, "unit": "req/s"},
            {"label": "ratio", "value": 1.36, "unit": "×"},
        ],
    )
    (result,) = evaluate([claim], run.data(), run.facts(), resamples=RESAMPLES)
    ((text, article, ours, status, why),) = claimtable.claim_rows([result])
    assert text == "c: a claim"
    assert article == "a 5,479 req/s; ratio 1.36×; tested: ≈ 1.36× (1.09–1.70×)"
    assert ours.startswith("a / b on w @25 1.50× [")
    assert status == "confirmed" and why.startswith("ours is 1.50×, within 1.09–1.70×")
    lines = claimtable.as_text([result])
    assert lines[0] == "[confirmed] c: a claim"
    assert lines[-1] == "1 confirmed, 0 refuted, 0 not enough evidence, 0 untestable"


def test_claim_table_without_article_figures_shows_the_expectation():
    run = RunBuilder()
    result = one(make_claim(ORDER), run)
    assert claimtable.format_article(result) == "requests_per_s: a > b > c"
    assert claimtable.format_ours(result.ours) == "–"
    rows = claimtable.readiness_rows(
        requirements_unmet([make_claim(ORDER, {"server_cores": 2})], run.facts())
    )
    assert rows[0][:2] == ("c", "no")


@pytest.mark.parametrize(
    "value, unit, text",
    [
        (28553.42, "req/s", "28,553 req/s"),
        (1.3614, "×", "1.36×"),
        (0.0027, "fraction", "0.27%"),
        (0.147, "fraction", "14.7%"),
        (3.70, "ms", "3.7 ms"),
        (1750.0, "ms", "1,750 ms"),
        (400.0, "% of a core", "400% of a core"),
        (111.0, "failed requests", "111 failed requests"),
        (7.41, "s", "7.41 s"),
    ],
)
def test_format_value(value, unit, text):
    assert claimtable.format_value(value, unit) == text


def test_long_figure_lists_are_cut():
    figures = [{"label": f"f{i}", "value": i, "unit": "×"} for i in range(10)]
    result = ClaimResult(make_claim(ORDER, figures=figures), ClaimStatus.UNTESTABLE, "", (), "x")
    assert (
        claimtable.format_article(result, max_figures=3)
        == "f0 0.00×; f1 1.00×; f2 2.00×; … (7 more)"
    )


# --- every article's claims on a synthetic full run ------------------------------------------
@pytest.mark.parametrize("path", sorted(CLAIMS_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_every_claims_file_evaluates_on_a_synthetic_run(path):
    """Each claim of each article, against made-up figures for every case of its full suite:
    no claim crashes and every one ends with a status and a reason."""
    claims = parse_claims(path)
    suite = parse_suite(ROOT / "suites" / f"{path.stem}.toml")
    rng = random.Random(path.stem)
    run = RunBuilder()
    stacks = list(suite.stacks) + ["node-mysql-native", "node-cluster"]
    usage = {"server": role_usage(90.0), "mariadb": role_usage(20.0)}
    for stack in dict.fromkeys(stacks):
        for spec in suite.workloads:
            cid = run.case(stack, spec.label)
            for i, value in enumerate(suite.levels_for(spec.label)):
                lat = {k: rng.uniform(1, 5000) for k in ("mean", "p50", "p80", "p99", "max")}
                run.levels.append(
                    level(
                        cid,
                        value,
                        rng.uniform(100, 10000),
                        latency_ms=lat,
                        errors={"timeout": rng.choice([0, 0, 5])},
                        index=i,
                        usage=usage,
                    )
                )
            run.scripts.append(
                script_row(stack, spec.label, 10, rng.uniform(0.5, 2), 0.5, 0.1, "ok")
            )
    params: dict[str, dict[str, str]] = {}
    for claim in claims.claims:
        for stack, wanted in claim.requires.params.items():
            params.setdefault(stack, {}).update(wanted)
    base = run.facts(server_cores=4, warmup_s=10.0, script_iterations=10)
    stacks = tuple(StackFacts(s.name, True, params=params.get(s.name, {})) for s in base.stacks)
    results = tuple(
        r
        for claim in claims.claims
        for r in evaluate(
            [claim],
            run.data(),
            dataclasses.replace(base, stacks=stacks, keepalive=claim.requires.keepalive or "on"),
            resamples=50,
        )
    )
    assert len(results) == len(claims.claims)
    for r in results:
        assert r.why, r.claim.id
        if r.status is not ClaimStatus.UNTESTABLE:
            assert r.ours, r.claim.id
    decided = [r for r in results if r.status is not ClaimStatus.UNTESTABLE]
    assert len(decided) >= len(results) // 2, [(r.claim.id, r.why) for r in results]
    assert all(math.isfinite(m.value) for r in results for m in r.ours if m.value is not None)


# --- decided only by the verdicts procedure ---------------------------------------------------
def test_an_uncalibrated_single_repetition_does_not_decide_a_near_band():
    """On a machine never calibrated the assumed 5% run-to-run spread widens a single
    repetition's ratio to about ±14%: 1.40× against a band 1.09–1.70× is decided, 1.65× is
    not, and says what would decide it."""
    for a, status in ((140.0, ClaimStatus.CONFIRMED), (165.0, ClaimStatus.UNDECIDED)):
        run = RunBuilder(calibrated=None)
        run.curve("a", "w", {25: a})
        run.curve("b", "w", {25: 100.0})
        result = one(make_claim(ratio_test("near", article=1.36, tolerance=0.25)), run)
        assert result.status is status, result.why
    assert "repetitions a side" in result.why and result.ours[0].low is not None


def test_one_level_without_a_series_counts_with_the_whole_level_spread():
    """One ab level a side: each figure carries the assumed 10% run-to-run spread of whole
    levels (10-s levels, shorter than the calibration's), so the ratio's interval is
    3 ×/÷ e^(1.96 sqrt(2) 0.1): 3× is decided, 1.05× is not."""

    def judged(a_rps: float) -> ClaimResult:
        run = RunBuilder()
        for stack, rps in (("a", a_rps), ("b", 100.0)):
            cid = run.case(stack, "w")
            run.levels.append(
                msgspec.structs.replace(level(cid, 25, rps), timeseries=None, driver="ab")
            )
        return one(make_claim(ratio_test("greater")), run)

    wide = judged(300.0)
    assert wide.status is ClaimStatus.CONFIRMED, wide.why
    half = math.exp(1.959964 * math.sqrt(2) * 0.10)
    assert (wide.ours[0].low, wide.ours[0].high) == pytest.approx((3 / half, 3 * half), rel=1e-5)
    close = judged(105.0)
    assert close.status is ClaimStatus.UNDECIDED
    assert close.why.startswith(
        "not enough evidence: a / b on w @25 is 1.05× (0.80–1.39), straddling ≥ 1.00×"
    )


# --- the least measurement a claim reads -------------------------------------------------------
RATIO_AT_300 = {
    "kind": "ratio",
    "metric": "requests_per_s",
    "expect": "greater",
    "numerator": {"stack": "a"},
    "denominator": {"stack": "b"},
    "workloads": ["w"],
    "levels": [300],
}


def test_a_stored_level_below_the_claims_least_requests_is_untestable():
    run = RunBuilder()
    run.case("a", "w")
    run.case("b", "w")
    run.levels += [level(1, 300, 2000.0, completed=300), level(2, 300, 1000.0, completed=300)]
    result = one(make_claim(RATIO_AT_300), run)  # the default: 1,000 requests
    assert result.status is ClaimStatus.UNTESTABLE
    assert result.why.endswith(
        "only 300 requests measured; the claim needs at least 1,000 per level"
    )
    # a claim that states a smaller need reads the same levels
    enough = one(make_claim(RATIO_AT_300, requires={"min_requests": 200}), run)
    assert enough.status is ClaimStatus.CONFIRMED, enough.why


def test_a_claims_least_seconds_is_checked_on_the_stored_level():
    run = RunBuilder()
    run.case("a", "w")
    run.case("b", "w")
    run.levels += [level(1, 300, 2000.0, duration_s=0.4), level(2, 300, 1000.0, duration_s=0.4)]
    assert one(make_claim(RATIO_AT_300), run).status is ClaimStatus.CONFIRMED  # no default
    result = one(make_claim(RATIO_AT_300, requires={"min_seconds": 2}), run)
    assert result.status is ClaimStatus.UNTESTABLE
    assert "only 0.40 s of load measured; the claim needs at least 2 s per level" in result.why


def test_the_plan_says_when_its_levels_send_too_few_requests():
    claim = make_claim(RATIO_AT_300)
    facts = Facts(
        server_cores=1,
        stacks=(StackFacts("a", True), StackFacts("b", True)),
        workload_levels={"w": (300.0,)},
        requests_per_connection=1,
    )
    (ready,) = requirements_unmet([claim], facts)
    assert ready.reasons == ("needs at least 1,000 requests per level; level 300 of w sends 300",)
    timed = Facts(
        server_cores=1, stacks=facts.stacks, workload_levels={"w": (300.0,)}, duration_s=1.0
    )
    (short,) = requirements_unmet([make_claim(RATIO_AT_300, requires={"min_seconds": 2})], timed)
    assert short.reasons == ("needs at least 2 s of load per level; w runs 1 s",)


# --- a band with both ends, a level against the peak it is -----------------------------------
def test_greater_with_an_upper_end_rejects_the_reverse_direction():
    """single-client-response-time: PHP's time 1.00-1.33x Node's; 0.90x (PHP faster, the
    reverse of the article) is refuted, as 1.50x is; 1.15x is confirmed (0.1% calibrated)."""
    test = ratio_test("greater", threshold=1.0, upper=1.33, levels=[25])
    outcomes = {}
    for a_rps in (90.0, 115.0, 150.0):
        run = two_stacks({25: a_rps}, {25: 100.0})
        outcomes[a_rps] = one(make_claim(test), run).status
    assert outcomes == {
        90.0: ClaimStatus.REFUTED,
        115.0: ClaimStatus.CONFIRMED,
        150.0: ClaimStatus.REFUTED,
    }
    with pytest.raises(InputError, match="key 'upper'"):
        make_claim(ratio_test("near", article=1.0, upper=1.33))


def test_a_level_against_the_peak_it_is_reads_exactly_one():
    """apache-near-peak-at-2000: when @2000 is the peak, the ratio is one measurement read
    twice, exactly 1 (not two independent figures with the run-to-run spread twice)."""
    test = {
        "kind": "ratio",
        "metric": "requests_per_s",
        "numerator": {"stack": "a", "level": 2000},
        "denominator": {"stack": "a", "level": "peak"},
        "expect": "greater",
        "threshold": 0.9,
        "workloads": ["w"],
    }
    run = RunBuilder(calibrated=None)  # the assumed 5%: two readings would straddle 0.9
    run.curve("a", "w", {1000: 900.0, 2000: 1000.0, 3000: 950.0})
    result = one(make_claim(test), run)
    assert result.status is ClaimStatus.CONFIRMED, result.why
    assert (result.ours[0].value, result.ours[0].low, result.ours[0].high) == (1.0, 1.0, 1.0)


def test_a_failure_rate_is_judged_on_its_binomial_interval():
    """At least 1% failed: 12 of 1,000 attempts (95% 0.62-2.09%) straddles 1%; 420 of
    35,000 (1.2%, 1.09-1.32%) is shown above it; 1 of 35,000 is shown below it."""
    test = {
        "kind": "threshold",
        "metric": "error_rate",
        "stacks": ["a"],
        "workloads": ["w"],
        "levels": [5000],
        "min": 0.01,
    }

    def judged(failed: int, completed: int) -> ClaimResult:
        run = RunBuilder()
        cid = run.case("a", "w")
        run.levels.append(level(cid, 5000, 100.0, completed=completed, errors={"timeout": failed}))
        return one(make_claim(test), run)

    straddling = judged(12, 988)
    assert straddling.status is ClaimStatus.UNDECIDED, straddling.why
    ours = straddling.ours[0]
    assert (ours.value, ours.low, ours.high) == pytest.approx(
        (0.012, *scipy_stats.beta.ppf([0.025], 12, 989), *scipy_stats.beta.ppf([0.975], 13, 988))
    )
    assert judged(420, 34_580).status is ClaimStatus.CONFIRMED
    assert judged(1, 34_999).status is ClaimStatus.REFUTED


def test_one_point_of_many_refutes_only_family_wise():
    """At least 100 req/s at 4 levels (calibrated 2%): a point at 95.5 has a 95% interval
    below 100 (high 95.5 e^(1.96 * 0.0203) = 99.4) but not a 98.75% one (1 - 0.05 / 4:
    95.5 e^(2.50 * 0.0203) = 100.5), so one point of four does not refute; at 90 it does."""
    test = {
        "kind": "threshold",
        "metric": "requests_per_s",
        "stacks": ["a"],
        "workloads": ["w"],
        "levels": [1, 2, 3, 4],
        "min": 100.0,
    }

    def judged(low_point: float) -> ClaimResult:
        run = RunBuilder(calibrated=0.02)
        run.curve("a", "w", {1: 200.0, 2: 200.0, 3: 200.0, 4: low_point})
        return one(make_claim(test), run)

    close = judged(95.5)
    assert close.status is ClaimStatus.UNDECIDED, close.why
    assert "not at the 98.75% level that 4 points of one claim need" in close.why
    assert close.ours[-1].high is not None and close.ours[-1].high < 100.0  # fails at 95%
    assert judged(90.0).status is ClaimStatus.REFUTED


def test_a_point_refuting_at_95_percent_is_chased_past_a_point_at_the_bound():
    """nginx-costs-node-third-on-compute's shape (docs/findings.md, 06:24): one point
    outside at 95% but not family-wise, another at the bound. Repeating the first decides
    the claim (refuted once it is shown outside at 98.75%); the second is at the bound, which
    no repetitions decide: so the claim says the first and wants only its level, and
    run --until-decided chases it instead of giving the claim up."""
    test = {
        "kind": "threshold",
        "metric": "requests_per_s",
        "stacks": ["a"],
        "workloads": ["w"],
        "levels": [1, 2, 3, 4],
        "min": 100.0,
    }
    run = RunBuilder(calibrated=0.02)
    run.curve("a", "w", {1: 200.0, 2: 200.0, 3: 100.0, 4: 95.5})
    result = one(make_claim(test), run)
    assert result.status is ClaimStatus.UNDECIDED, result.why
    assert "not at the 98.75% level that 4 points of one claim need" in result.why
    assert "bound" not in result.why  # the point at the bound is not the one to say
    (want,) = result.to_decide
    assert want.levels == (LevelKey("a", "w", 4.0),) and want.repeatable
    (chased,) = undecided_claims([result])
    step = claims_round([chased], {LevelKey("a", "w", 4.0): 1}, lambda _: 10.0, 60.0, 5)
    assert isinstance(step, ClaimRound) and list(step.added()) == [LevelKey("a", "w", 4.0)]
    # "at least 3 of 4": one point outside refutes nothing, so every undecided point counts,
    # and the one at the bound leaves nothing to chase
    result = one(make_claim({**test, "at_least": 3}), run)
    assert result.status is ClaimStatus.UNDECIDED, result.why
    assert [w.repeatable for w in result.to_decide] == [False, True], result.to_decide


def test_an_undecided_claim_says_which_levels_need_how_many_repetitions():
    """What run --until-decided chases: the undecided point's two levels and the repetitions
    a side its words name; a decided claim names none."""
    run = RunBuilder(calibrated=None)
    run.curve("a", "w", {25: 165.0})
    run.curve("b", "w", {25: 100.0})
    result = one(make_claim(ratio_test("near", article=1.36, tolerance=0.25)), run)
    assert result.status is ClaimStatus.UNDECIDED
    reps = int(result.why.split(" repetitions a side")[0].rsplit(" ", 1)[1])
    assert result.to_decide == (
        ToDecide(
            (LevelKey("a", "w", 25.0), LevelKey("b", "w", 25.0)),
            reps,
            f"{reps} repetitions a side (repeat = {reps}) would decide it",
        ),
    )
    assert undecided_claims([result]) == (UndecidedClaim(result.claim.id, result.to_decide),)
    run = RunBuilder(calibrated=None)
    run.curve("a", "w", {25: 140.0})
    run.curve("b", "w", {25: 100.0})
    decided = one(make_claim(ratio_test("near", article=1.36, tolerance=0.25)), run)
    assert decided.status is ClaimStatus.CONFIRMED and decided.to_decide == ()
    assert undecided_claims([decided]) == ()


def test_a_point_at_the_claims_bound_is_not_chased_with_repetitions():
    """1.00× against "≥ 1.00×" sits at the bound: no number of repetitions decides it."""
    run = RunBuilder(calibrated=None)
    run.curve("a", "w", {25: 100.0})
    run.curve("b", "w", {25: 100.0})
    result = one(make_claim(ratio_test("greater")), run)
    assert result.status is ClaimStatus.UNDECIDED
    (want,) = result.to_decide
    assert want.repetitions is None and not want.repeatable
    assert "no practical amount of measurement" in want.why
