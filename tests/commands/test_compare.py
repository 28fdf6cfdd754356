"""`stackbench compare`: hand-built runs in an in-memory store."""

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from stackbench.analysis.analysis import analyse
from stackbench.analysis.compare import Gate, _diff, parse_latency_gate, parse_slower_gate
from stackbench.analysis.verdicts import RunSpread
from stackbench.commands.compare import run_compare, run_from_results
from stackbench.config.measured import Second
from stackbench.errors import ExitCode, InputError
from stackbench.report.document import RESULTS_SCHEMA
from stackbench.report.exports import results_json
from stackbench.store.records import CaseRecord, Flag, LevelFlag
from stackbench.store.store import Store
from tests.analysis.synthetic_series import flat
from tests.analysis.test_levelsteady import histogram
from tests.measured import open_loop, second
from tests.store.test_store import level, run_record


def seconds(rps: list[float], p99_us: float = 900.0) -> tuple[Second, ...]:
    """Per-second entries as the native loader writes them, with their histograms; p99
    varies by ±2% from second to second."""
    out = []
    for i, v in enumerate(rps):
        p99 = int(p99_us * (1.0 + 0.02 * ((i % 3) - 1)))
        out.append(second(i + 1, v, p50_us=100, p99_us=p99, histogram=histogram({100: 98, p99: 2})))
    return tuple(out)


def add_run(
    store: Store,
    level_rps: float,
    seed: int,
    stack: str = "node",
    environment: dict[str, object] | None = None,
    p99_us: float = 900.0,
) -> int:
    run = store.start_run(run_record(environment=environment or {"cores": 2}))
    case = store.add_case(
        CaseRecord(
            run_id=run,
            stack=stack,
            workload="hello",
            label="hello",
            path="/hello",
            params={"workers": "1"},
        )
    )
    rps = [float(v) for v in flat(40, 0.01, seed=seed, level=level_rps)]
    store.add_level(
        level(
            case, 0, duration_s=40.0, requests_per_s=sum(rps) / 40, timeseries=seconds(rps, p99_us)
        )
    )
    return run


def compare(
    store: Store, a: int, b: int, fmt: str = "json", gates: list[Gate] | None = None
) -> tuple[int, str]:
    console = Console(record=True, width=200)
    code = run_compare(console, store, str(a), str(b), fmt, gates or [])
    return code, console.export_text()


def test_a_run_compared_with_itself_is_warned_about_and_never_a_regression() -> None:
    store = Store(":memory:")
    run = add_run(store, 10_000, seed=1)
    code, text = compare(store, run, run, gates=[parse_slower_gate("5%")])
    doc = json.loads(text)
    assert doc["same_run"] is True
    # one repetition a side: the run-to-run spread (assumed 5%) is not excluded, so the gate
    # cannot show "not regressed beyond 5%" either: undecided, with what would decide it
    assert code == ExitCode.UNDECIDED
    verdicts = {m["metric"]: m for m in doc["cases"][0]["metrics"]}
    assert verdicts["throughput"]["verdict"] == "not enough evidence"
    assert "repetitions a side" in verdicts["throughput"]["decide"]
    assert doc["changes"] == [] and [g["outcome"] for g in doc["gates"]] == ["undecided"]
    code, text = compare(store, run, run, "terminal", [parse_slower_gate("5%")])
    lines = text.splitlines()
    assert lines[1].startswith("warning: A and B are the same run (1)")  # before any verdict
    assert lines[-1].endswith("run 1 against run 1; the same run twice)")


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
    assert doc["gates"][0]["outcome"] == "regressed"
    assert doc["gates"][0]["gate"] == "throughput more than 5% slower"
    assert {"section": "environment", "key": "kernel", "a": "(absent)", "b": "6.9"} in doc[
        "changes"
    ]


def test_repeated_runs_clear_the_gate_when_a_change_is_shown_small() -> None:
    store = Store(":memory:")
    runs = []
    for level_rps, seeds in ((10_000, (1, 2, 3, 4, 5, 6)), (9_900, (7, 8, 9, 10, 11, 12))):
        run = store.start_run(run_record(environment={"cores": 2}))
        case = store.add_case(
            CaseRecord(
                run_id=run, stack="node", workload="hello", label="hello", path="/hello", params={}
            )
        )
        for rep, seed in enumerate(seeds):
            rps = [float(v) for v in flat(40, 0.01, seed=seed, level=level_rps)]
            store.add_level(
                level(
                    case,
                    0,
                    repetition=rep,
                    duration_s=40.0,
                    requests_per_s=sum(rps) / 40,
                    timeseries=seconds(rps),
                )
            )
        runs.append(run)
    code, text = compare(store, runs[0], runs[1], "terminal", [parse_slower_gate("5%")])
    assert code == ExitCode.OK, text
    assert "gate 'throughput more than 5% slower': 1 not regressed" in text


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


def test_a_stored_run_compares_with_a_results_json_path_or_its_folder(tmp_path: Path) -> None:
    store = Store(":memory:")
    a, b = add_run(store, 10_000, seed=1), add_run(store, 8_000, seed=2)
    folder = tmp_path / f"run-{a}"
    folder.mkdir()
    (folder / "results.json").write_text(results_json(analyse(store.load_run(a)), []))
    compared = []
    for ref in (str(folder / "results.json"), str(folder)):
        console = Console(record=True, width=80)
        code = run_compare(console, store, ref, str(b), "terminal", [parse_slower_gate("5%")])
        lines = console.export_text().splitlines()
        assert code == ExitCode.RULE_BROKEN
        said = " ".join(" ".join(lines[1:4]).split())
        assert said.startswith(f"A = {folder / 'results.json'}; B = run {b} of"), lines[:4]
        assert lines[-1].startswith("1 slower") and f"run {b} against run {a}" in lines[-1]
        compared.append(ref)
    assert compared == [str(folder / "results.json"), str(folder)]  # both forms were read


def test_a_results_json_gives_back_its_levels_typed_flags_and_schedule_included(
    tmp_path: Path,
) -> None:
    store = Store(":memory:")
    run = store.start_run(run_record())
    case = store.add_case(
        CaseRecord(run_id=run, stack="node", workload="hello", label="hello", path="/", params={})
    )
    store.add_level(
        level(
            case,
            0,
            flags=(Flag(None, "raised RLIMIT_NOFILE"), LevelFlag.INVALID.detail("error rate 2%")),
            open_loop=open_loop(500.0, sustained=False, unsent=9),
        )
    )
    stored = store.load_run(run)
    path = tmp_path / "results.json"
    path.write_text(results_json(analyse(stored), []))
    data, _ = run_from_results(path)
    assert data.levels == stored.levels


def test_a_results_json_keeps_the_spread_its_verdicts_used(tmp_path: Path) -> None:
    store = Store(":memory:")
    run = add_run(store, 10_000, seed=1)
    calibrated = RunSpread(0.01, False, "run-to-run spread 1.0% (calibrated)")
    path = tmp_path / "results.json"
    path.write_text(results_json(analyse(store.load_run(run), spread=calibrated), []))
    console = Console(record=True, width=200)
    run_compare(console, None, str(path), str(path), "json", [])
    assert json.loads(console.export_text())["run_spread"]["sigma"] == 0.01


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"hello": 1}',
            "other.json: not a stackbench results.json of this version: it has no 'schema' key",
        ),
        (
            '{"schema": "stackbench-results/2"}',
            f"its schema is 'stackbench-results/2', this stackbench reads '{RESULTS_SCHEMA}'",
        ),
        ("[1, 2]", "other.json: not a stackbench results.json"),
        ("not json", "other.json: not a stackbench results.json"),
        (f'{{"schema": "{RESULTS_SCHEMA}", "run": {{}}}}', "not a valid stackbench results.json"),
    ],
)
def test_a_file_that_is_not_results_json_is_an_input_error(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "other.json"
    path.write_text(content)
    with pytest.raises(InputError, match=re.escape(message)):
        run_compare(Console(), None, str(path), str(path), "json", [])


def test_a_missing_path_is_named_not_taken_for_a_run_number(tmp_path: Path) -> None:
    missing = str(tmp_path / "run-9" / "results.json")
    with pytest.raises(InputError, match="results.json: no such file: give a results.json"):
        run_compare(Console(), None, missing, missing, "json", [])


def test_terminal_output_fits_80_columns_without_breaking_a_word() -> None:
    store = Store(":memory:")
    a = add_run(store, 10_000, seed=1, stack="php-fpm-nginx-with-a-long-variant-name")
    b = add_run(store, 5_860, seed=2, stack="php-fpm-nginx-with-a-long-variant-name")
    console = Console(record=True, width=80)
    code = run_compare(console, store, str(a), str(b), "terminal", [parse_slower_gate("5%")])
    narrow = console.export_text().splitlines()
    wide_console = Console(record=True, width=200)
    run_compare(wide_console, store, str(a), str(b), "terminal", [parse_slower_gate("5%")])
    wide = wide_console.export_text()
    assert code == ExitCode.RULE_BROKEN
    assert all(len(line) <= 80 for line in narrow), [x for x in narrow if len(x) > 80]
    assert sorted(" ".join(narrow).split()) == sorted(wide.split())  # no word was cut
    assert narrow[3].lstrip().startswith("slower")  # the verdict comes first
    assert narrow[-1].startswith("1 slower, ") and "figures, run 2 against run 1" in narrow[-1]


def test_a_changed_record_in_a_list_shows_only_its_changed_field():
    a = {
        "deviations": [
            {"setting": "load tool", "ours": "native"},
            {"setting": "levels", "ours": "1 to 800"},
        ]
    }
    b = {
        "deviations": [
            {"setting": "load tool", "ours": "native"},
            {"setting": "levels", "ours": "1 to 400"},
        ]
    }
    (change,) = _diff("settings", a, b)
    assert (change.key, change.a, change.b) == ("deviations[1].ours", "1 to 800", "1 to 400")


def repeated_runs(store: Store, marked: int = 1, **first_of_b: object) -> tuple[int, int]:
    """Two runs of six repetitions, B 1% slower (a gate at 5% clears it), B's first `marked`
    repetitions recorded with `first_of_b` (flags, status)."""
    runs = []
    for level_rps, seeds in ((10_000, (1, 2, 3, 4, 5, 6)), (9_900, (7, 8, 9, 10, 11, 12))):
        run = store.start_run(run_record(environment={"cores": 2}))
        case = store.add_case(
            CaseRecord(
                run_id=run, stack="node", workload="hello", label="hello", path="/hello", params={}
            )
        )
        for rep, seed in enumerate(seeds):
            rps = [float(v) for v in flat(40, 0.01, seed=seed, level=level_rps)]
            extra = first_of_b if runs and rep < marked else {}
            store.add_level(
                level(
                    case,
                    0,
                    repetition=rep,
                    duration_s=40.0,
                    requests_per_s=sum(rps) / 40,
                    timeseries=seconds(rps),
                    **extra,
                )
            )
        runs.append(run)
    return runs[0], runs[1]


DISTURBED_13 = LevelFlag.DISTURBED.detail(
    "other processes used 13.0% of core 0 (node), more than the 2% noise band allows"
)


def test_the_gate_never_clears_a_disturbed_measurement() -> None:
    """The same runs clear the gate (above); with every one of B's repetitions disturbed
    (each still disturbed after its re-measure), the gate stays undecided (exit 6) and says
    why."""
    store = Store(":memory:")
    a, b = repeated_runs(store, marked=6, flags=(DISTURBED_13,))
    code, text = compare(store, a, b, "terminal", [parse_slower_gate("5%")])
    assert code == ExitCode.UNDECIDED, text
    assert "gate 'throughput more than 5% slower': 1 undecided" in text
    assert "disturbed by other processes" in text


def test_the_gate_reads_a_level_without_its_disturbed_repetition_and_says_so() -> None:
    """One of B's six repetitions still disturbed after its re-measure is left out, as the
    claims leave it out (the flag is the cores' account, not the figure): the gate is judged
    on the other five, and the output names what it left out."""
    store = Store(":memory:")
    a, b = repeated_runs(store, flags=(DISTURBED_13,))
    code, text = compare(store, a, b, "terminal", [parse_slower_gate("5%")])
    assert code == ExitCode.OK, text
    assert "gate 'throughput more than 5% slower': 1 not regressed" in text
    assert f"disturbed repetitions left out: run {b}: node hello @25: 1 of 6 repetitions" in (
        " ".join(text.split())
    )
    data = json.loads(compare(store, a, b, "json", [parse_slower_gate("5%")])[1])
    assert len(data["left_out"]) == 1 and data["left_out"][0].startswith(f"run {b}: node hello")


def test_the_gate_never_clears_an_unsteady_measurement() -> None:
    """B's level invalid (unsteady): measured in both runs, so it is no 'only in run A'
    case the gate may pass over: undecided (exit 6), with the reason."""
    store = Store(":memory:")
    unsteady = LevelFlag.UNSTEADY.detail("3 responses for 50 connections in 12 s")
    a, b = repeated_runs(store, flags=(unsteady,), status="invalid")
    code, text = compare(store, a, b, "terminal", [parse_slower_gate("5%")])
    assert code == ExitCode.UNDECIDED, text
    assert "only in run" not in text
    assert f"run {b}'s level is invalid (unsteady: 3 responses for 50 connections" in text
    code, text = compare(store, a, b, "json", [parse_slower_gate("5%")])
    assert [g["outcome"] for g in json.loads(text)["gates"]] == ["undecided"]
    # without a gate the runs have no valid case in common: not comparable, as before
    assert compare(store, a, b)[0] == ExitCode.NOT_COMPARABLE
