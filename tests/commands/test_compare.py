"""`stackbench compare`: hand-built runs in an in-memory store."""

import json
from pathlib import Path

import pytest
from rich.console import Console

from stackbench.analysis.analysis import analyse
from stackbench.analysis.compare import Gate, parse_latency_gate, parse_slower_gate
from stackbench.commands.compare import run_compare
from stackbench.errors import ExitCode, InputError
from stackbench.report.exports import results_json
from stackbench.store.records import CaseRecord
from stackbench.store.store import Store
from tests.analysis.synthetic_series import flat
from tests.store.test_store import level, run_record


def seconds(rps: list[float], p99_us: float = 900.0) -> tuple[dict[str, float], ...]:
    """Per-second entries as the store keeps them (float values only); p99 varies by ±2%."""
    return tuple({"t_s": float(i), "completed": v, "errors": 0.0, "duration_s": 1.0,
                  "p50_us": 100.0, "p99_us": p99_us * (1.0 + 0.02 * ((i % 3) - 1))}
                 for i, v in enumerate(rps))


def add_run(store: Store, level_rps: float, seed: int, stack: str = "node",
            environment: dict[str, object] | None = None, p99_us: float = 900.0) -> int:
    run = store.start_run(run_record(environment=environment or {"cores": 2}))
    case = store.add_case(CaseRecord(run_id=run, stack=stack, workload="hello", label="hello",
                                     path="/hello", params={"workers": "1"}))
    rps = [float(v) for v in flat(40, 0.01, seed=seed, level=level_rps)]
    store.add_level(level(case, 0, duration_s=40.0, requests_per_s=sum(rps) / 40,
                          timeseries=seconds(rps, p99_us)))
    return run


def compare(store: Store, a: int, b: int, fmt: str = "json",
            gates: list[Gate] | None = None) -> tuple[int, str]:
    console = Console(record=True, width=200)
    code = run_compare(console, store, str(a), str(b), fmt, gates or [])
    return code, console.export_text()


def test_same_run_twice_is_no_significant_difference_and_exits_0() -> None:
    store = Store(":memory:")
    run = add_run(store, 10_000, seed=1)
    code, text = compare(store, run, run, gates=[parse_slower_gate("5%")])
    doc = json.loads(text)
    assert code == ExitCode.OK
    verdicts = {m["metric"]: m["verdict"] for m in doc["cases"][0]["metrics"]}
    assert verdicts["throughput"] == "no significant difference"
    assert doc["changes"] == [] and doc["gates_broken"] == []


def test_a_twenty_percent_slower_run_breaks_the_slower_gate() -> None:
    store = Store(":memory:")
    a = add_run(store, 10_000, seed=1)
    b = add_run(store, 8_000, seed=2, environment={"cores": 2, "kernel": "6.9"})
    code, text = compare(store, a, b, gates=[parse_slower_gate("5%")])
    doc = json.loads(text)
    throughput = next(m for m in doc["cases"][0]["metrics"] if m["metric"] == "throughput")
    assert throughput["verdict"] == "slower"
    assert throughput["high"] < 0.95
    assert code == ExitCode.RULE_BROKEN
    assert "throughput more than 5% slower" in doc["gates_broken"][0]
    assert {"section": "environment", "key": "kernel", "a": "(absent)", "b": "6.9"} in \
        doc["changes"]


def test_a_small_real_slowdown_under_the_threshold_does_not_fail() -> None:
    store = Store(":memory:")
    a = add_run(store, 10_000, seed=1)
    b = add_run(store, 9_700, seed=2)
    code, _ = compare(store, a, b, "terminal", [parse_slower_gate("5%")])
    assert code == ExitCode.OK


def test_a_higher_p99_breaks_the_latency_gate() -> None:
    store = Store(":memory:")
    a = add_run(store, 10_000, seed=1)
    b = add_run(store, 10_000, seed=2, p99_us=1_200.0)
    code, text = compare(store, a, b, gates=[parse_latency_gate("p99 +10%")])
    p99 = next(m for m in json.loads(text)["cases"][0]["metrics"] if m["metric"] == "p99")
    assert p99["verdict"] == "slower" and p99["ratio"] == pytest.approx(1200 / 900, rel=0.01)
    assert code == ExitCode.RULE_BROKEN


def test_runs_without_a_common_case_are_not_comparable() -> None:
    store = Store(":memory:")
    a = add_run(store, 10_000, seed=1, stack="node")
    b = add_run(store, 10_000, seed=2, stack="go")
    code, text = compare(store, a, b, "md")
    assert code == ExitCode.NOT_COMPARABLE
    assert "not comparable" in text and "only in run" in text


def test_gate_syntax() -> None:
    assert parse_slower_gate("5%") == Gate("throughput", 0.05)
    assert parse_latency_gate("p99 +10%") == Gate("p99", 0.10)
    with pytest.raises(InputError, match="--fail-if-slower"):
        parse_slower_gate("five")
    with pytest.raises(InputError, match="--fail-if"):
        parse_latency_gate("p99 10")


def test_results_json_files_compare_like_stored_runs(tmp_path: Path) -> None:
    store = Store(":memory:")
    a, b = add_run(store, 10_000, seed=1), add_run(store, 8_000, seed=2)
    paths = []
    for run in (a, b):
        path = tmp_path / f"run-{run}.json"
        path.write_text(results_json(analyse(store.load_run(run)), []))
        paths.append(str(path))
    console = Console(record=True, width=200)
    code = run_compare(console, None, paths[0], paths[1], "json", [parse_slower_gate("5%")])
    doc = json.loads(console.export_text())
    assert code == ExitCode.RULE_BROKEN
    assert doc["cases"][0]["metrics"][0]["verdict"] == "slower"


def test_a_file_that_is_not_results_json_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="other.json: not a stackbench results.json"):
        run_compare(Console(), None, str(path), str(path), "json", [])
